"""nanotron"""
