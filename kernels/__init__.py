"""The C kernels of `benchbot demo`, shipped inside the package as benchbot.kernels."""
