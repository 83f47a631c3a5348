# source: https://github.com/zai-org/GLM-V/issues/8 (first post), query 3, rank 6
# the same command appears twice in the post: quoted in the System Info prose, then under Reproduction; both copied verbatim.
vllm serve THUDM-GLM-4.1V-9B-Thinking --limit-mm-per-prompt '{"image":32}' --allowed-local-media-path /
vllm serve THUDM-GLM-4.1V-9B-Thinking --limit-mm-per-prompt '{"image":32}' --allowed-local-media-path /
