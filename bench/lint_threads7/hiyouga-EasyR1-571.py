# source: https://github.com/hiyouga/EasyR1/issues/571 (first post, "Relevant Code"), query 11, rank 1
# the post quotes EasyR1's verl/workers/fsdp_workers.py; the block is copied whole: the if/else is the assignment of torch_dtype, an argument of the call.
if fsdp_config.torch_dtype is None:
    torch_dtype = torch.float32 if role != "ref" else torch.bfloat16  # Default float32 for non-"ref"
else:
    torch_dtype = PrecisionType.to_dtype(fsdp_config.torch_dtype)

model = AutoClass.from_pretrained(
    model_config.model_path,
    torch_dtype=torch_dtype,
    attn_implementation="flash_attention_2",  # Enabled FA2
    # Other args...
)
