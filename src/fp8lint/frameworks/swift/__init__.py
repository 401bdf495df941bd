"""swift"""
