"""deepspeed"""
