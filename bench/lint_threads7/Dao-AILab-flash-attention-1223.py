# source: https://github.com/Dao-AILab/flash-attention/issues/1223 (first post), query 11, rank 7
# the post wraps the call in inline backticks (markdown, not code); they are left out. No import line is shown.
model = LlavaNextForConditionalGeneration.from_pretrained(
    "llava-hf/llava-v1.6-34b-hf", 
    device_map="cuda",
    torch_dtype=torch.float16,
    attn_implementation="flash_attention_2"
) 
