# source: https://github.com/huggingface/transformers/issues/28175 (first post), query 10, rank 9
# the model line of the post; the processor line before it is neither the call nor an assignment of one of its arguments.
model = AutoModelForPreTraining.from_pretrained("/gemini/data-2/data/llava",load_in_4bit=True,bnb_4bit_compute_dtype=torch.float16,low_cpu_mem_usage=True,attn_implementation="sdpa").to("cuda")
