import textwrap

from errkb.harvest import extract_sites
from errkb.harvest.cpp_sites import collect_macros, extract
from errkb.packages import PackageConfig

HEADER = textwrap.dedent('''
    #define CHECK_SHAPE(x, ...) TORCH_CHECK(x.sizes() == torch::IntArrayRef({__VA_ARGS__}), #x " must have shape (" #__VA_ARGS__ ")")
    #define CHECK_DEVICE(x) TORCH_CHECK(x.is_cuda(), #x " must be on CUDA")
    #define CHECK_EQ(a, b) TORCH_CHECK((a) == (b), "CHECK_EQ(" #a ", " #b ") failed. ", a, " vs ", b)
''')

SOURCE = textwrap.dedent('''
    // TORCH_CHECK(false, "commented out");
    void mha_fwd(at::Tensor q, int head_size) {
        TORCH_CHECK(head_size <= 256, "FlashAttention forward only supports head dimension at most 256");
        TORCH_CHECK(q.dtype() == torch::kFloat16 || q.dtype() == torch::kBFloat16,
                    "FlashAttention only support fp16 and bf16 data type, got ", q.dtype());
        CHECK_SHAPE(q, batch_size, seqlen_q, num_heads, head_size);
        TORCH_CHECK_NOT_IMPLEMENTED(head_size % 8 == 0, "head_size must be a multiple of 8");
        TORCH_CHECK(q.is_contiguous());
        /* TORCH_WARN("block comment"); */
        TORCH_WARN("Memory efficient kernel not used because: ", "head_dim ", head_size, " too large");
    }
    void plan(int page_size) {
        TVM_FFI_ICHECK_EQ(page_size, 16) << "page_size must be 16, got " << page_size;
        std::ostringstream err_msg;
        err_msg << "Unsupported head_dim: " << page_size;
        FLASHINFER_ERROR(err_msg.str());
        throw std::invalid_argument("Unsupported layout " + std::to_string(page_size));
        TVM_FFI_THROW(ValueError) << "bad value " << page_size;
        TVM_FFI_THROW(NotImplementedError) << "not here";
        CHECK_EQ(q.size(0), page_size);
        FLASHINFER_CHECK(strides[0] == 1);
    }
''')


def sites():
    return {s.line: s for s in extract("csrc/api.cpp", SOURCE, collect_macros(HEADER))}


def test_torch_check_messages_and_classes():
    s = sites()
    assert s[4].template == "FlashAttention forward only supports head dimension at most 256"
    assert s[4].error_class == "RuntimeError" and s[4].function == "mha_fwd"
    assert s[5].template == "FlashAttention only support fp16 and bf16 data type, got {q_dtype}"
    assert (s[8].error_class, s[8].template) == ("NotImplementedError", "head_size must be a multiple of 8")


def test_project_macros_are_expanded_with_stringised_arguments():
    assert sites()[7].template == "q must have shape (batch_size, seqlen_q, num_heads, head_size)"


def test_check_without_message_prints_its_condition():
    assert sites()[9].template == "Expected q.is_contiguous() to be true, but got false."


def test_comments_are_ignored_and_lines_kept():
    s = sites()
    assert 2 not in s and 10 not in s
    assert s[11].kind == "check-warning"
    assert s[11].template == "Memory efficient kernel not used because: head_dim {head_size} too large"


def test_stream_checks_ostringstream_and_throw():
    s = sites()
    assert s[14].template == "page_size must be 16, got {page_size}"
    assert s[17].template == "Unsupported head_dim: {page_size}"
    assert (s[18].error_class, s[18].template) == ("ValueError", "Unsupported layout {page_size}")


def test_tvm_ffi_kinds_become_the_python_class_users_see():
    s = sites()
    assert s[14].error_class == "RuntimeError"  # ICHECK's InternalError has no Python class of its own
    assert s[19].error_class == "ValueError"  # a registered kind keeps its name
    assert s[20].error_class == "RuntimeError"  # an unregistered one is raised as RuntimeError


def test_a_macro_name_inside_a_message_is_not_a_call():
    # FlashInfer's CHECK_EQ prints "CHECK_EQ(" itself: that text must not be expanded again.
    found = [s for s in extract("csrc/api.cpp", SOURCE, collect_macros(HEADER)) if s.line == 21]
    assert [s.template for s in found] == ["CHECK_EQ(q.size(0), page_size) failed. {q_size_0} vs {page_size}"]


def test_flashinfer_check_without_message_prints_its_condition():
    assert sites()[22].template == "Check failed: strides[0] == 1"


DISPATCH_HEADER = textwrap.dedent('''
    #define _PICK_CASE(label, value, ...)                                   \\
      [&]() -> bool {                                                     \\
        switch (value) {                                                  \\
          __VA_ARGS__                                                     \\
          default:                                                        \\
            std::ostringstream msg;                                       \\
            msg << __PRETTY_FUNCTION__ << " cannot pick " label " " << int(value); \\
            TORCH_CHECK(false, msg.str());                                \\
            return false;                                                 \\
        }                                                                 \\
      }()
    #define PICK_tile_width(expr, name, ...) _PICK_CASE("tile width", expr, __VA_ARGS__)
''')

DISPATCH_SOURCE = textwrap.dedent('''
    void run(int tile) {
        PICK_tile_width(tile, TILE, [&] {
            TORCH_CHECK(tile > 0, "tile must be positive");
            return true;
        });
    }
''')


def test_a_macro_that_calls_a_raising_macro_is_expanded_too():
    # PICK_tile_width raises only through _PICK_CASE, whose label is a string pasted next to literals.
    found = [(s.line, s.template) for s in extract("csrc/run.cu", DISPATCH_SOURCE, collect_macros(DISPATCH_HEADER))]
    assert (3, "{pretty_function} cannot pick tile width {tile}") in found
    # The lambda passed in is read where it is written, not again under the macro's line.
    assert [line for line, template in found if template == "tile must be positive"] == [4]


def test_a_raising_macro_is_not_replaced_by_a_harmless_one_of_the_same_name(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.h").write_text('#define CHECK_CUDA(x) TORCH_CHECK(x.is_cuda(), #x " must be on CUDA")\n')
    (tmp_path / "pkg" / "b.h").write_text("#define CHECK_CUDA(x) assert(x)\n")  # another extension's own
    (tmp_path / "pkg" / "c.cpp").write_text("void f(at::Tensor q) { CHECK_CUDA(q); }\n")
    cfg = PackageConfig("pkg", "o/pkg", None, (), ("pkg/*.cpp",), ())
    raw, _, _ = extract_sites(cfg, str(tmp_path))
    assert [s.template for s in raw] == ["q must be on CUDA"]
