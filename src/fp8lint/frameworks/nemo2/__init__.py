"""nemo2"""
