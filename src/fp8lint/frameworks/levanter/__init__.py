"""levanter"""
