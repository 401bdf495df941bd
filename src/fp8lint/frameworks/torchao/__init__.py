"""torchao"""
