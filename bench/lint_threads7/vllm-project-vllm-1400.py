# source: https://github.com/vllm-project/vllm/issues/1400 (first post), query 2, rank 7
# the prompts and sampling_params lines are neither the call nor an assignment of one of its arguments.
from vllm import LLM, SamplingParams

llm = LLM(model="TheBloke/Mistral-7B-Instruct-v0.1-AWQ", quantization='awq', dtype='bfloat16', gpu_memory_utilization=0.5)
