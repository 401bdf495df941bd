"""mlperf"""
