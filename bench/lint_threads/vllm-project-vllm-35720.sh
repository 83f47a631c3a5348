# source: https://github.com/vllm-project/vllm/pull/35720 (first post, "Before"), query 3, rank 1 (read through the title follow-up)
# copied verbatim without the shell prompt (the log lines that follow it are not copied).
sudo docker run \
    -i -t --rm \
    -v ~/.cache:/root/.cache \
    --gpus=all --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 \
    -p 8000:8000 \
    vllm/vllm-openai:v0.16.0 \
    --model unsloth/Meta-Llama-3.1-8B-Instruct \
    --max-model-len 4096 \
    --kv-cache-dtype fp8
