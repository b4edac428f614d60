"""stackresolve: a consistent NVIDIA driver + CUDA + cuDNN + Python + TensorFlow stack for a machine."""

__version__ = "0.1.0"
