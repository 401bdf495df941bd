"""msamp"""
