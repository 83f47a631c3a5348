# source: https://github.com/rhymes-ai/Aria/pull/59 (first post), query 10, rank 3
# the call as the post quotes it inline; no import lines are shown.
AutoModelForCausalLM.from_pretrained(model_id_or_path, device_map="auto", torch_dtype=torch.bfloat16, trust_remote_code=True, attn_implementation="sdpa")
