"""all-MiniLM-L6-v2 rebuilt from its exported ONNX file with onnxruntime's fused operators.

The exported file (PyTorch's exporter) spells each layer's attention out
as some thirty small nodes (reshapes, transposes, a -inf mask with a NaN
guard) that onnxruntime's own graph fusions do not recognise, and the
fusion they do apply, SkipLayerNormalization, has a CPU kernel about eight
times slower than the Add and LayerNormalization it replaces at these
shapes. Every one of those nodes runs on every call, so the same network
written with one `Attention` node per layer, plain Add + LayerNormalization,
exact (erf) Gelu and mean pooling inside the graph costs about 15% less CPU
per text (docs/benchmarks.md, "The embedding model").

The rebuild reads the checked file's tensors by the model's own parameter
names (biases and LayerNorm weights carry them; a weight is found as the
right-hand side of the MatMul its bias is added to) and keeps them as they
are stored: int8 with per-channel scales, widened by Cast and Mul that
onnxruntime folds into constants once at load, as it does for the exported
graph. The arithmetic is the same, so the vectors agree with the exported
graph's to a cosine above 0.99999 (tests/memory_app/test_embeddings.py) and
keep the model id. Only this pinned file is rebuilt: its SHA-256 is checked
before it is parsed, and a file of another shape fails here, loudly.

With `integer=True` the 24 weight products run in integer arithmetic
(AVX-512 VNNI here) on the stored int8 weights and their per-channel
scales as they are, so the weights carry no error beyond the stored one.
Each token's activations are quantised to int8 on their own scale (their
largest magnitude over 127): a token's rounding then depends on no other
token, and a text's vector on no other text of its batch, which one scale
for the whole tensor would break. Same network, about half the CPU, vectors
at a cosine of about 0.995 or more to the float32 ones: a model id of its
own (docs/decisions.md, "Integer arithmetic for the embedding model").

The products must be exact for that id to mean one set of vectors. With
VNNI the CPU multiplies uint8 activations by int8 weights straight into
int32; without it, onnxruntime's uint8-by-int8 kernel adds pairs in int16,
which can saturate at these ranges. There the weights are shifted into
uint8 (zero point 128): the same integers, a slower kernel, no saturation.
"""

from pathlib import Path

import numpy as np

LAYERS = 6
HEADS = 12
HIDDEN = 384
LAYER_NORM_EPSILON = 1e-12
PREFIX = "inner."


def has_vnni() -> bool:
    """Whether this CPU has AVX-512 VNNI (read where Linux lists the CPU's flags)."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "avx512_vnni" in flags.split()


def fused_model(
    exported: bytes, *, integer: bool = False, signed_weights: bool | None = None
) -> bytes:
    """The serialised fused model: token ids and attention mask in, unit vectors out.

    `signed_weights` picks the integer kernel (int8 weights where the CPU has
    VNNI, uint8 elsewhere); both compute the same integers.
    """
    if signed_weights is None:
        signed_weights = has_vnni()
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    graph = onnx.load_from_string(exported).graph
    stored = {tensor.name: tensor for tensor in graph.initializer}
    producer = {output: node for node in graph.node for output in node.output}
    consumers: dict[str, list] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    nodes: list = []
    initializers: dict[str, object] = {}

    def constant(name: str, value: np.ndarray) -> str:
        initializers[name] = numpy_helper.from_array(value, name)
        return name

    def kept(name: str) -> str:
        initializers.setdefault(name, stored[name])
        return name

    def widened(value: str, as_name: str) -> str:
        """A stored int8 tensor times its scale, as the exported graph computes it."""
        scale_node = producer[value]
        cast = producer[scale_node.input[0]]
        if scale_node.op_type != "Mul" or cast.op_type != "Cast":
            raise ValueError(f"{value} is not a widened int8 tensor")
        nodes.append(
            helper.make_node(
                "Cast", [kept(cast.input[0])], [f"{as_name}_wide"], to=TensorProto.FLOAT
            )
        )
        nodes.append(
            helper.make_node("Mul", [f"{as_name}_wide", kept(scale_node.input[1])], [as_name])
        )
        return as_name

    def weight_of(bias: str) -> str:
        """The right-hand side of the MatMul whose output `bias` is added to."""
        (add,) = consumers[bias]
        (matmul_output,) = [name for name in add.input if name != bias]
        return producer[matmul_output].input[1]

    def stored_int8(value: str) -> tuple[np.ndarray, np.ndarray]:
        """The int8 tensor and per-column scales that `value` widens."""
        scale_node = producer[value]
        cast = producer[scale_node.input[0]]
        if scale_node.op_type != "Mul" or cast.op_type != "Cast":
            raise ValueError(f"{value} is not a widened int8 tensor")
        weights = numpy_helper.to_array(stored[cast.input[0]])
        scales = numpy_helper.to_array(stored[scale_node.input[1]]).reshape(-1)
        if scales.shape != (weights.shape[1],):
            raise ValueError(f"{value} is not scaled per column")
        return weights, scales

    def integer_product(x: str, weights: list[str], out: str) -> str:
        """x times the stored weights (side by side), bias left out, in integer arithmetic.

        Symmetric per-token int8 shifted by 128 into uint8, the left operand
        onnxruntime's integer kernels take; the product comes back as float32
        times the weight scales, and the token's own scale is applied after.
        """
        int8_weights, scales = zip(*(stored_int8(w) for w in weights), strict=True)
        joined = np.concatenate(int8_weights, axis=1)
        if signed_weights:
            q, weight_zero = constant(f"{out}_q", joined), []
        else:
            q = constant(f"{out}_q", (joined.astype(np.int16) + 128).astype(np.uint8))
            weight_zero = ["offset_uint8"]
        scale = constant(f"{out}_scale", np.concatenate(scales).astype(np.float32))
        nodes.extend(
            [
                helper.make_node("Abs", [x], [f"{out}_abs"]),
                helper.make_node("ReduceMax", [f"{out}_abs", "last"], [f"{out}_peak"]),
                # A row of zeros would divide by zero.
                helper.make_node("Max", [f"{out}_peak", "tiny"], [f"{out}_floor"]),
                helper.make_node("Mul", [f"{out}_floor", "per_step"], [f"{out}_step"]),
                helper.make_node("Div", [x, f"{out}_step"], [f"{out}_steps"]),
                helper.make_node("Round", [f"{out}_steps"], [f"{out}_rounded"]),
                helper.make_node("Add", [f"{out}_rounded", "offset"], [f"{out}_shifted"]),
                helper.make_node(
                    "Cast", [f"{out}_shifted"], [f"{out}_uint8"], to=TensorProto.UINT8
                ),
                helper.make_node(
                    "MatMulIntegerToFloat",
                    [f"{out}_uint8", q, "unit", scale, "offset_uint8", *weight_zero],
                    [f"{out}_unscaled"],
                    domain="com.microsoft",
                ),
                helper.make_node("Mul", [f"{out}_unscaled", f"{out}_step"], [out]),
            ]
        )
        return out

    def product(x: str, bias: str, out: str) -> str:
        """x times the weight whose bias is `bias`, bias left out."""
        if integer:
            return integer_product(x, [weight_of(bias)], out)
        nodes.append(helper.make_node("MatMul", [x, widened(weight_of(bias), f"{out}_w")], [out]))
        return out

    def attention(hidden: str, biases: list[str], out: str) -> None:
        """Self-attention over the real tokens, query/key/value from `hidden`."""
        qkv_bias = constant(
            f"{out}_qkv_bias", np.concatenate([numpy_helper.to_array(stored[b]) for b in biases])
        )
        if not integer:
            weights = [widened(weight_of(b), f"{out}_{i}") for i, b in enumerate(biases)]
            nodes.append(helper.make_node("Concat", weights, [f"{out}_qkv"], axis=1))
            nodes.append(
                helper.make_node(
                    "Attention",
                    [hidden, f"{out}_qkv", qkv_bias, "mask_int32"],
                    [out],
                    domain="com.microsoft",
                    num_heads=HEADS,
                )
            )
            return
        # Attention's integer form (QAttention) takes one scale for the whole
        # input; MultiHeadAttention takes the products made above.
        integer_product(hidden, [weight_of(b) for b in biases], f"{out}_qkv")
        split = [f"{out}_{part}" for part in ("q", "k", "v")]
        nodes.append(helper.make_node("Split", [f"{out}_qkv"], split, axis=-1, num_outputs=3))
        nodes.append(
            helper.make_node(
                "MultiHeadAttention",
                [*split, qkv_bias, "mask_int32"],
                [out],
                domain="com.microsoft",
                num_heads=HEADS,
            )
        )

    def add_and_norm(x: str, bias: str, residual: str, norm: str, out: str) -> None:
        nodes.extend(
            [
                helper.make_node("Add", [x, kept(bias)], [f"{out}_biased"]),
                helper.make_node("Add", [f"{out}_biased", residual], [f"{out}_sum"]),
                helper.make_node(
                    "LayerNormalization",
                    [f"{out}_sum", kept(f"{norm}.weight"), kept(f"{norm}.bias")],
                    [out],
                    axis=-1,
                    epsilon=LAYER_NORM_EPSILON,
                ),
            ]
        )

    # Embeddings: (word + token type 0) + position, in the exported order.
    embeddings = f"{PREFIX}embeddings"
    token_type = numpy_helper.to_array(stored[f"{embeddings}.token_type_embeddings.weight"])
    nodes.extend(
        [
            helper.make_node(
                "Gather",
                [widened(f"{embeddings}.word_embeddings.weight", "word"), "input_ids"],
                ["words"],
            ),
            helper.make_node("Add", ["words", constant("token_type_0", token_type[0])], ["typed"]),
            helper.make_node("Shape", ["input_ids"], ["length"], start=1, end=2),
            helper.make_node(
                "Slice",
                [
                    widened(f"{embeddings}.position_embeddings.weight", "position"),
                    constant("zero", np.array([0], dtype=np.int64)),
                    "length",
                    constant("first_axis", np.array([0], dtype=np.int64)),
                ],
                ["positions"],
            ),
            helper.make_node("Add", ["typed", "positions"], ["embedded"]),
            helper.make_node(
                "LayerNormalization",
                [
                    "embedded",
                    kept(f"{embeddings}.LayerNorm.weight"),
                    kept(f"{embeddings}.LayerNorm.bias"),
                ],
                ["hidden_0"],
                axis=-1,
                epsilon=LAYER_NORM_EPSILON,
            ),
            helper.make_node("Cast", ["attention_mask"], ["mask_int32"], to=TensorProto.INT32),
        ]
    )

    if integer:
        constant("last", np.array([-1], dtype=np.int64))
        constant("tiny", np.array(1e-12, dtype=np.float32))
        constant("per_step", np.array(1 / 127, dtype=np.float32))
        constant("offset", np.array(128, dtype=np.float32))
        constant("offset_uint8", np.array(128, dtype=np.uint8))
        constant("unit", np.array(1, dtype=np.float32))

    hidden = "hidden_0"
    for index in range(LAYERS):
        layer = f"{PREFIX}encoder.layer.{index}"
        name = f"layer_{index}"
        biases = [f"{layer}.attention.self.{p}.bias" for p in ("query", "key", "value")]
        attention(hidden, biases, f"{name}_attention")
        output_bias = f"{layer}.attention.output.dense.bias"
        add_and_norm(
            product(f"{name}_attention", output_bias, f"{name}_projected"),
            output_bias,
            hidden,
            f"{layer}.attention.output.LayerNorm",
            f"{name}_attended",
        )
        up_bias = f"{layer}.intermediate.dense.bias"
        down_bias = f"{layer}.output.dense.bias"
        up = product(f"{name}_attended", up_bias, f"{name}_up_out")
        nodes.extend(
            [
                helper.make_node("Add", [up, kept(up_bias)], [f"{name}_up_biased"]),
                helper.make_node(
                    "Gelu", [f"{name}_up_biased"], [f"{name}_gelu"], approximate="none"
                ),
            ]
        )
        add_and_norm(
            product(f"{name}_gelu", down_bias, f"{name}_down_out"),
            down_bias,
            f"{name}_attended",
            f"{layer}.output.LayerNorm",
            f"hidden_{index + 1}",
        )
        hidden = f"hidden_{index + 1}"

    # Mean over the real tokens, then unit length: the sentence-transformers pooling.
    nodes.extend(
        [
            helper.make_node("Cast", ["attention_mask"], ["mask_float"], to=TensorProto.FLOAT),
            helper.make_node(
                "Unsqueeze",
                ["mask_float", constant("last_axis", np.array([2], dtype=np.int64))],
                ["mask_column"],
            ),
            helper.make_node("Mul", [hidden, "mask_column"], ["masked"]),
            helper.make_node(
                "ReduceSum",
                ["masked", constant("token_axis", np.array([1], dtype=np.int64))],
                ["summed"],
                keepdims=0,
            ),
            helper.make_node("ReduceSum", ["mask_column", "token_axis"], ["counted"], keepdims=0),
            helper.make_node("Div", ["summed", "counted"], ["mean"]),
            helper.make_node("LpNormalization", ["mean"], ["sentence_embedding"], axis=-1, p=2),
        ]
    )
    token_inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask")
    ]
    output = helper.make_tensor_value_info(
        "sentence_embedding", TensorProto.FLOAT, ["batch", HIDDEN]
    )
    fused = helper.make_graph(
        nodes, "all-MiniLM-L6-v2-fused", token_inputs, [output], list(initializers.values())
    )
    model = helper.make_model(
        fused,
        # Opset 20 for the exact (erf) Gelu; com.microsoft for Attention.
        opset_imports=[helper.make_opsetid("", 20), helper.make_opsetid("com.microsoft", 1)],
        ir_version=10,
    )
    return model.SerializeToString()
