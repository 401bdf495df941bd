"""olmo_core"""
