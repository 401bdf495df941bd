"""maxtext"""
