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
"""

import numpy as np

LAYERS = 6
HEADS = 12
HIDDEN = 384
LAYER_NORM_EPSILON = 1e-12
PREFIX = "inner."


def fused_model(exported: bytes) -> bytes:
    """The serialised fused model: token ids and attention mask in, unit vectors out."""
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

    hidden = "hidden_0"
    for index in range(LAYERS):
        layer = f"{PREFIX}encoder.layer.{index}"
        name = f"layer_{index}"
        projections = ("query", "key", "value")
        biases = [f"{layer}.attention.self.{p}.bias" for p in projections]
        qkv_bias = np.concatenate([numpy_helper.to_array(stored[b]) for b in biases])
        nodes.append(
            helper.make_node(
                "Concat",
                [
                    widened(weight_of(b), f"{name}_{p}")
                    for b, p in zip(biases, projections, strict=True)
                ],
                [f"{name}_qkv"],
                axis=1,
            )
        )
        nodes.append(
            helper.make_node(
                "Attention",
                [hidden, f"{name}_qkv", constant(f"{name}_qkv_bias", qkv_bias), "mask_int32"],
                [f"{name}_attention"],
                domain="com.microsoft",
                num_heads=HEADS,
            )
        )
        output_bias = f"{layer}.attention.output.dense.bias"
        nodes.append(
            helper.make_node(
                "MatMul",
                [f"{name}_attention", widened(weight_of(output_bias), f"{name}_output")],
                [f"{name}_projected"],
            )
        )
        add_and_norm(
            f"{name}_projected",
            output_bias,
            hidden,
            f"{layer}.attention.output.LayerNorm",
            f"{name}_attended",
        )
        up_bias = f"{layer}.intermediate.dense.bias"
        down_bias = f"{layer}.output.dense.bias"
        nodes.extend(
            [
                helper.make_node(
                    "MatMul",
                    [f"{name}_attended", widened(weight_of(up_bias), f"{name}_up")],
                    [f"{name}_up_out"],
                ),
                helper.make_node("Add", [f"{name}_up_out", kept(up_bias)], [f"{name}_up_biased"]),
                helper.make_node(
                    "Gelu", [f"{name}_up_biased"], [f"{name}_gelu"], approximate="none"
                ),
                helper.make_node(
                    "MatMul",
                    [f"{name}_gelu", widened(weight_of(down_bias), f"{name}_down")],
                    [f"{name}_down_out"],
                ),
            ]
        )
        add_and_norm(
            f"{name}_down_out",
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
