"""nemo_rl"""
