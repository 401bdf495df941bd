"""accelerate"""
