"""The one-kernel CUDA extension (an elementwise scale, y = a * x) that the arch-mismatch cases
build with torch's JIT extension builder: small enough to build in a minute, and a real launch."""

SOURCE = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
__global__ void scale_kernel(const float* x, float* y, float a, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
torch::Tensor scale(torch::Tensor x, double a) {
  auto y = torch::empty_like(x);
  int64_t n = x.numel();
  scale_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), (float)a, n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""


def build(name: str, arch_list: str, folder: str):
    """The extension built by torch's JIT builder for `arch_list` (TORCH_CUDA_ARCH_LIST, restored
    afterwards) into `folder`."""
    import os

    from torch.utils.cpp_extension import load_inline

    saved = os.environ.get("TORCH_CUDA_ARCH_LIST")
    os.environ["TORCH_CUDA_ARCH_LIST"] = arch_list
    try:
        return load_inline(name=name, cpp_sources="torch::Tensor scale(torch::Tensor x, double a);",
                           cuda_sources=SOURCE, functions=["scale"], build_directory=folder, verbose=False)
    finally:
        if saved is None:
            os.environ.pop("TORCH_CUDA_ARCH_LIST", None)
        else:
            os.environ["TORCH_CUDA_ARCH_LIST"] = saved
