# source: https://github.com/sgl-project/sglang/pull/3731 (first post), query 8, rank 4
# the server command of the post's code block; the gsm8k client command is not a launch.
python3 -m sglang.launch_server --model meta-llama/Llama-2-7b-chat-hf  --speculative-algo EAGLE --speculative-draft lmzheng/sglang-EAGLE-llama2-chat-7B --speculative-num-steps 2 --speculative-eagle-topk 4 --speculative-num-draft-tokens 4 --disable-radix --attention-backend triton
