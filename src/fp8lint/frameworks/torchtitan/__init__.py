"""torchtitan"""
