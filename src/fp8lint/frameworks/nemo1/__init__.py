"""nemo1"""
