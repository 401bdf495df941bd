"""llamafactory"""
