"""automodel"""
