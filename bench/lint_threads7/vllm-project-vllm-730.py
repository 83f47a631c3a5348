# source: https://github.com/vllm-project/vllm/issues/730 (first post), query 1, rank 3
# the post wraps the code in one pair of inline backticks (markdown, not code); they are left out. The generate/print lines are neither the call nor an assignment of one of its arguments.
from vllm import LLM

llm = LLM(model='baichuan-inc/Baichuan-13B-Chat', trust_remote_code=True)  # Name or path of your model
