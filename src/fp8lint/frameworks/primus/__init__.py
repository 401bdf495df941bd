"""primus"""
