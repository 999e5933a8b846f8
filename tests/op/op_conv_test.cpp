// conv2d (NCHW and NHWC: stride 2 on odd inputs, dilation 2, groups 3; blocked NCHW[x]c),
// depthwise conv2d and conv2d_transpose under their default CPU and GPU schedules.
#include "op/OpTestUtil.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/op/Conv.h"
#include "tessel/op/Elementwise.h"

namespace tessel::testing {
namespace {

TEST(OpConv, NchwStrideTwoOnOddInput) {
    Tensor x = placeholder({1, 3, 11, 9}), w = placeholder({4, 3, 3, 3});
    Tensor y = op::conv2d_nchw(x, w, op::conv_params(2, 1));
    EXPECT_EQ(const_shape(y), (std::vector<int64_t>{1, 4, 6, 5}));
    expect_default_schedules_match({y}, 27);
}

// Output channels in multiples of the vector width: the CPU tile is vectorised along them (two
// vectors a row for 32 channels, one for 48 = 3 x 16), the weight packed with them innermost and
// the padding computed once (not inlined).
TEST(OpConv, NchwChannelVectorisedTiles) {
    for (int64_t k : {32, 48}) {
        Tensor x = placeholder({1, 3, 11, 9}), w = placeholder({k, 3, 3, 3});
        Tensor y = op::conv2d_nchw(x, w, op::conv_params(2, 1));
        EXPECT_EQ(const_shape(y), (std::vector<int64_t>{1, k, 6, 5}));
        Schedule s = op::default_schedule({y}, Target("llvm"));
        // x, w, its pack, the padding, the local tile, y.
        ASSERT_EQ(s.stages().size(), 6u) << s.to_python();
        EXPECT_EQ(s.stage(s.stage_of(op_inputs(y.op())[0])).attach, AttachKind::Root)
            << s.to_python();
        expect_default_cpu_matches({y}, 27);
    }
    Tensor x = placeholder({2, 5, 7, 6}), w = placeholder({32, 5, 1, 1});
    expect_default_cpu_matches({op::relu(op::conv2d_nchw(x, w))}, 5);
    // The padding is copied in parallel from 2^17 elements on (32 channels of 66 x 66 here), on
    // one core below (3 x 13 x 11 above).
    Tensor big = placeholder({1, 32, 64, 64}), wb = placeholder({32, 32, 3, 3});
    Tensor yb = op::conv2d_nchw(big, wb, op::conv_params(1, 1));
    Schedule s = op::default_schedule({yb}, Target("llvm -mcpu=skylake-avx512"));
    const Stage& pad = s.stage(s.stage_of(op_inputs(yb.op())[0]));
    EXPECT_EQ(pad.iters[pad.leaf[0]].annotation, IterAnnotation::Parallel) << s.to_python();
    Tensor small = placeholder({1, 3, 11, 9}), ws = placeholder({32, 3, 3, 3});
    Tensor ys = op::conv2d_nchw(small, ws, op::conv_params(2, 1));
    Schedule t = op::default_schedule({ys}, Target("llvm -mcpu=skylake-avx512"));
    const Stage& serial = t.stage(t.stage_of(op_inputs(ys.op())[0]));
    for (int id : serial.leaf) EXPECT_NE(serial.iters[id].annotation, IterAnnotation::Parallel);
}

// The tile's output rows go outside its blocks of output channels when the input outgrows half
// of L2 and the weight fits in the other half (each row's input then read once from memory, again
// from cache by each block); else the blocks go outside. The parallel loop is then the image's
// rows, else its channel blocks.
TEST(OpConv, NchwRowsOutsideTheChannelBlocksForALargeInput) {
    // 3 x 3 (a large 1 x 1 conv runs as a GEMM): the padded input 42 KiB (over half of an L2 of
    // 80), the weight 36 (within that half).
    Tensor x = placeholder({1, 16, 24, 24}), w = placeholder({64, 16, 3, 3});
    Tensor y = op::conv2d_nchw(x, w, op::conv_params(1, 1));
    for (const auto& [l2, outer] :
         std::vector<std::pair<std::string, int64_t>>{{"80K", 24}, {"4M", 2}}) {
        // AVX-512 (16 lanes: blocks of 32 channels, 2 of 64), whatever the host has.
        Schedule s = op::default_schedule({y}, Target("llvm -mcpu=skylake-avx512 -l2=" + l2));
        const Stage& st = s.stage(s.stage_of(y));
        EXPECT_EQ(st.iters[st.leaf[0]].const_extent(), outer) << l2 << "\n" << s.to_python();
        expect_matches_reference(s, 16 * 9);
    }
}

// A 1 x 1 NCHW conv over 196 output pixels or more runs as the CPU GEMM (reindexed: output
// channels x pixels over input channels), its epilogue (bias and ReLU) computing the product in
// its register tiles; strides 1 and 2, two images (pixels of both in one axis), a channel count
// no tile divides. Below 196 pixels it keeps the vector-axis tile, and where the GEMM tile's rows
// of the weight outgrow L1 with AVX-512 (gemm_rows_outgrow_l1).
TEST(OpConv, NchwPointwiseAsAGemm) {
    auto reindexed = [](const Schedule& s) {
        return s.to_python().find("reindex") != std::string::npos;
    };
    for (const auto& [n, c, h, k, stride] : std::vector<std::array<int64_t, 5>>{
             {1, 8, 32, 16, 1}, {2, 5, 24, 20, 1}, {1, 6, 48, 32, 2}}) {
        SCOPED_TRACE(::testing::Message()
                     << n << " " << c << " " << h << " " << k << " " << stride);
        Tensor x = placeholder({n, c, h, h}), w = placeholder({k, c, 1, 1});
        Tensor b = placeholder({1, k, 1, 1});
        Tensor y = op::conv2d_nchw(x, w, op::conv_params(stride, 0));
        Schedule s = op::default_schedule({y}, Target("llvm"));
        EXPECT_TRUE(reindexed(s)) << s.to_python();
        expect_matches_reference(s, c);
        Tensor z = op::relu(op::add(y, b));
        Schedule e = op::default_schedule({z}, Target("llvm"));
        EXPECT_TRUE(reindexed(e)) << e.to_python();
        expect_matches_reference(e, c);
    }
    Tensor x = placeholder({1, 8, 8, 8}), w = placeholder({16, 8, 1, 1});  // 64 pixels
    EXPECT_FALSE(reindexed(op::default_schedule({op::conv2d_nchw(x, w)}, Target("llvm"))));

    // With AVX-512's 32 registers, where the GEMM tile's 12 rows of the weight (700 input
    // channels: 33.6 KB) outgrow L1, the vector-axis tile; not with a larger L1, nor with AVX2's
    // 16 registers (6 rows).
    Tensor big = placeholder({1, 700, 14, 14}), wide = placeholder({24, 700, 1, 1});
    Tensor y = op::conv2d_nchw(big, wide);
    Schedule small_l1 = op::default_schedule({y}, Target("llvm -mcpu=skylake-avx512 -l1d=32K"));
    EXPECT_FALSE(reindexed(small_l1)) << small_l1.to_python();
    expect_matches_reference(small_l1, 700);
    EXPECT_TRUE(reindexed(op::default_schedule({y}, Target("llvm -mcpu=skylake-avx512 -l1d=48K"))));
    EXPECT_TRUE(reindexed(op::default_schedule({y}, Target("llvm -mcpu=znver3 -l1d=32K"))));
}

// conv2d on blocked activations: blocks of 8 and 16 input channels, output blocks of 16 and 32
// (one vector or two on AVX-512), strides 1 and 2, a prime width (a register tile with a tail),
// the RGB stem's single block of 3, a ReLU epilogue. The CPU tile holds 2 blocks x 14 columns of
// accumulators where the blocks are one vector each.
TEST(OpConv, NchwcBlockedActivations) {
    struct Case {
        int64_t c, cb, h, w, k, kb, r, stride;
        bool relu;
    };
    for (const Case& k : std::vector<Case>{{24, 8, 4, 13, 32, 16, 3, 1, false},
                                           {32, 16, 5, 17, 32, 16, 3, 2, true},
                                           {16, 16, 5, 31, 64, 32, 1, 1, false},
                                           {3, 3, 12, 12, 16, 16, 7, 2, true}}) {
        SCOPED_TRACE(::testing::Message() << k.c << " " << k.cb << " " << k.w << " " << k.kb);
        Tensor x = placeholder({1, k.c / k.cb, k.h, k.w, k.cb});
        Tensor w = placeholder({k.k / k.kb, k.c / k.cb, k.r, k.r, k.cb, k.kb});
        Tensor y = op::conv2d_nchwc(x, w, op::conv_params(k.stride, k.r / 2));
        if (k.relu) y = op::relu(y);
        expect_default_schedules_match({y}, k.c * k.r * k.r);
    }
    Tensor x = placeholder({1, 4, 28, 28, 16}), w = placeholder({4, 4, 3, 3, 16, 16});
    Schedule s = op::default_schedule({op::conv2d_nchwc(x, w, op::conv_params(1, 1))},
                                      Target("llvm -mcpu=skylake-avx512"));
    const std::string py = s.to_python();
    EXPECT_NE(py.find("factor=14)  # conv2d_nchwc: i3"), std::string::npos) << py;
    EXPECT_NE(py.find("factor=2)  # conv2d_nchwc: i1"), std::string::npos) << py;
    // Rows outside the pairs of blocks when the input is over a quarter of L2 (18 KiB of 72 here)
    // and the weight (36 KiB) fits in half of it; else the blocks outside.
    Tensor big = placeholder({1, 1, 17, 17, 16}), w2 = placeholder({4, 1, 3, 3, 16, 16});
    Tensor y = op::conv2d_nchwc(big, w2, op::conv_params(1, 1));
    for (const auto& [l2, order] : std::vector<std::pair<std::string, std::string>>{
             {"72K", "[0, 3, 1, 4, 2, 5, 6])  # conv2d_nchwc"},
             {"4M", "[0, 1, 3, 4, 2, 5, 6])  # conv2d_nchwc"}}) {
        Schedule b = op::default_schedule({y}, Target("llvm -mcpu=skylake-avx512 -l2=" + l2));
        EXPECT_NE(b.to_python().find(order), std::string::npos) << l2 << "\n" << b.to_python();
        expect_matches_reference(b, 16 * 9);
    }
    // Rows of 7 (half the AVX-512 tile's 14 columns; on AVX2 two tiles, 4 + 3) under a 3 x 3
    // window: the input blocks go outside the rows, each row's accumulators added to the output
    // between blocks; at stride 1 and 2, as the output's own cache and inside a ReLU.
    for (const auto& [h, stride, relu, cpu] :
         std::vector<std::tuple<int64_t, int64_t, bool, std::string>>{
             {7, 1, false, "skylake-avx512"},
             {13, 2, true, "skylake-avx512"},
             {7, 1, true, "haswell"}}) {
        SCOPED_TRACE(::testing::Message() << h << " " << stride << " " << relu << " " << cpu);
        Tensor x7 = placeholder({1, 3, h, h, 16}), w7 = placeholder({4, 3, 3, 3, 16, 16});
        Tensor y7 = op::conv2d_nchwc(x7, w7, op::conv_params(stride, 1));
        if (relu) y7 = op::relu(y7);
        Schedule b = op::default_schedule({y7}, Target("llvm -mcpu=" + cpu));
        EXPECT_NE(b.to_python().find("[0, 7, 2, 3, 8, 9, 10, 1, 4, 5, 6])  # conv2d_nchwc"),
                  std::string::npos)
            << b.to_python();
        expect_matches_reference(b, 48 * 9);
    }
    // At stride 2 the padding is inlined (2.25 reads an element), but kept a stage of its own
    // under AVX2's budget of 6 columns, which no divisor of a row of 14 comes near: evened out
    // as 5 + 5 + 4 (a guarded tail); 28 take 4.
    for (const auto& [h, kept] : std::vector<std::pair<int64_t, bool>>{{28, true}, {56, false}}) {
        SCOPED_TRACE(h);
        Tensor xs = placeholder({1, 2, h, h, 16}), ws = placeholder({2, 2, 3, 3, 16, 16});
        Tensor ys = op::conv2d_nchwc(xs, ws, op::conv_params(2, 1));
        Schedule b = op::default_schedule({ys}, Target("llvm -mcpu=haswell"));
        const Stage& pad = b.stage(b.stage_of(op_inputs(ys.op())[0]));
        EXPECT_EQ(pad.attach != AttachKind::Inlined, kept) << b.to_python();
        EXPECT_NE(b.to_python().find(kept ? "factor=5)  # conv2d_nchwc: i3"
                                          : "factor=4)  # conv2d_nchwc: i3"),
                  std::string::npos)
            << b.to_python();
        if (h == 28) expect_matches_reference(b, 32 * 9);
    }
    // The padding stage kept for a 3 x 3 window is copied in parallel from 2^17 elements on (4
    // blocks of 46 x 46 here), on one core below (30 x 30); run at the smaller size.
    for (const auto& [h, parallel] :
         std::vector<std::pair<int64_t, bool>>{{44, true}, {28, false}}) {
        SCOPED_TRACE(h);
        Tensor xs = placeholder({1, 4, h, h, 16}), ws = placeholder({1, 4, 3, 3, 16, 16});
        Tensor ys = op::conv2d_nchwc(xs, ws, op::conv_params(1, 1));
        Schedule b = op::default_schedule({ys}, Target("llvm -mcpu=skylake-avx512"));
        const Stage& pad = b.stage(b.stage_of(op_inputs(ys.op())[0]));
        ASSERT_NE(pad.attach, AttachKind::Inlined) << b.to_python();
        for (int id : pad.leaf)
            EXPECT_EQ(pad.iters[id].annotation == IterAnnotation::Parallel,
                      parallel && id == pad.leaf[0])
                << b.to_python();
        if (!parallel) expect_matches_reference(b, 64 * 9);
    }
    // AVX2 under a 1 x 1 window: where a block's weights over all input channels outgrow L1 (16
    // KiB for 256 channels against an L1 of 8 here), the input blocks go outside the rows in a
    // tile of 8 accumulators (4 blocks x 1 column on a row of 7, 2 x 2 on a row of 10); 128
    // channels (8 KiB) keep the rows inside. (An L2 of 64 KiB keeps the rows from going outside:
    // the weight, 64 KiB, outgrows half of it.)
    for (const auto& [c, h, outside] : std::vector<std::tuple<int64_t, int64_t, bool>>{
             {256, 7, true}, {256, 10, true}, {128, 7, false}}) {
        SCOPED_TRACE(::testing::Message() << c << " " << h);
        Tensor xp = placeholder({1, c / 16, h, h, 16}), wp = placeholder({4, c / 16, 1, 1, 16, 16});
        Schedule b = op::default_schedule({op::conv2d_nchwc(xp, wp)},
                                          Target("llvm -mcpu=haswell -l1d=8K -l2=64K"));
        const std::string text = b.to_python();
        EXPECT_EQ(
            text.find("[0, 7, 2, 3, 8, 9, 10, 1, 4, 5, 6])  # conv2d_nchwc") != std::string::npos,
            outside)
            << text;
        if (!outside) continue;
        EXPECT_NE(
            text.find(h == 7 ? "factor=4)  # conv2d_nchwc: i1" : "factor=2)  # conv2d_nchwc: i1"),
            std::string::npos)
            << text;
        if (h == 10) expect_matches_reference(b, c);
    }
    // AVX2 under a 1 x 1 window, a block's weights within L1 (8 KiB here): the rows go outside
    // the blocks once the input (25 KiB) is over half of L2, even where the weight (32 KiB)
    // outgrows half of it (an L2 of 48 KiB); AVX-512's tile keeps the rows inside there.
    Tensor xq = placeholder({1, 8, 7, 7, 16}), wq = placeholder({4, 8, 1, 1, 16, 16});
    for (const auto& [cpu, outside] :
         std::vector<std::pair<std::string, bool>>{{"haswell", true}, {"skylake-avx512", false}}) {
        SCOPED_TRACE(cpu);
        Schedule b = op::default_schedule({op::conv2d_nchwc(xq, wq)},
                                          Target("llvm -mcpu=" + cpu + " -l1d=8K -l2=48K"));
        const std::string text = b.to_python();
        EXPECT_EQ(text.find("[0, 3, 1, 4, 2, 5, 6])  # conv2d_nchwc") != std::string::npos, outside)
            << text;
        if (outside) expect_matches_reference(b, 128);
    }
}

// The taps on the zero padding are skipped, not multiplied (ScheduleOps' padding guard,
// partition_loops): in the blocked 3 x 3 tile at 7 x 7 (2 blocks x 7 columns, AVX-512), the
// window's row loop runs over the rows inside the input (the output row loop split into its first
// row, the middle and its last, each running the window rows inside: [1, 3), [0, 3), [0, 2)), and
// the window's first and last columns leave out the tile's first and last column (6, 7 and 6
// columns under the three parts of the window's column loop). No guard is left; the results are
// the definition's.
TEST(OpConv, NchwcTapsOnThePaddingSkipped) {
    Tensor x = placeholder({1, 2, 7, 7, 16}), w = placeholder({2, 2, 3, 3, 16, 16});
    Tensor y = op::conv2d_nchwc(x, w, op::conv_params(1, 1));
    Schedule s = op::default_schedule({y}, Target("llvm -mcpu=skylake-avx512"));
    LowerOptions o;
    o.stop_after = "partition_loops";
    LoweredFunc f = lower(s, {x, w, y}, Target("llvm -mcpu=skylake-avx512"), "main", o);
    const std::string ir = to_string(f);
    std::vector<int64_t> columns;  // the unrolled tile's column loops inside the reduction
    std::vector<std::pair<int64_t, int64_t>> rows;  // the window row loops' ranges
    int guards = 0;
    post_order_visit(f.body, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::IfThenElse) ++guards;
        if (n->node_type != IRNodeType::For) return;
        const auto* loop = static_cast<const For*>(n);
        if (loop->loop_var.name() == "ry")
            rows.emplace_back(as_const_int(loop->min).value_or(-1),
                              as_const_int(loop->extent).value_or(-1));
        if (loop->loop_var.name() == "rx")
            post_order_visit(loop->body, [&](const IRNode* m) {
                const auto* c =
                    m->node_type == IRNodeType::For ? static_cast<const For*>(m) : nullptr;
                if (c && c->loop_var.name().rfind("i3", 0) == 0)
                    columns.push_back(as_const_int(c->extent).value_or(-1));
            });
    });
    using Rows = std::vector<std::pair<int64_t, int64_t>>;
    EXPECT_EQ(rows, (Rows{{1, 2}, {0, 3}, {0, 2}})) << ir;
    EXPECT_EQ(columns, (std::vector<int64_t>{6, 7, 6, 6, 7, 6, 6, 7, 6})) << ir;
    EXPECT_EQ(guards, 0) << ir;
    expect_matches_reference(s, 2 * 16 * 9);
    // NCHW, stride 2 on an odd input, dilation 2 and asymmetric padding: as the definition.
    Tensor xn = placeholder({1, 5, 9, 11}), wn = placeholder({32, 5, 3, 3});
    expect_default_cpu_matches({op::conv2d_nchw(xn, wn, op::conv_params(2, 1))}, 45);
    op::Conv2DParams dilated = op::conv_params(1, 2, 2);
    dilated.padding = {2, 1, 0, 2};
    expect_default_cpu_matches({op::conv2d_nchw(xn, wn, dilated)}, 45);
}

// Winograd's F(2 x 2, 3 x 3) computes the convolution: its definition, run by the reference
// interpreter, against conv2d_nchwc's on the same operands (odd extents: the last tiles run past
// the output; asymmetric padding), and its default CPU schedule against its definition.
TEST(OpConv, NchwcWinogradIsTheConvolution) {
    Tensor x = placeholder({2, 2, 9, 7, 8}, Float(32), "x");
    Tensor w = placeholder({3, 2, 3, 3, 8, 16}, Float(32), "w");
    op::Conv2DParams p;
    p.padding = {1, 0, 2, 1};
    Tensor direct = op::conv2d_nchwc(x, w, p), winograd = op::conv2d_nchwc_winograd(x, w, p);
    EXPECT_EQ(const_shape(winograd), (std::vector<int64_t>{2, 3, 10, 6, 16}));
    std::vector<std::pair<Tensor, HostArray>> in = {
        {x, HostArray::random(Float(32), const_shape(x), 3)},
        {w, HostArray::random(Float(32), const_shape(w), 4)}};
    const HostArray want = evaluate_reference({direct}, in).at(0);
    const HostArray got = evaluate_reference({winograd}, in).at(0);
    CompareResult r = compare_to_reference(got, want, tolerance_for(Float(32), 4 * 16 * 9));
    EXPECT_TRUE(r.ok) << r.message();
    expect_default_cpu_matches({winograd}, 4 * 16 * 9);
    // The product is a batch of GEMMs; the input's and the output's transforms unrolled.
    Schedule s = op::default_schedule({winograd}, Target("llvm -mcpu=skylake-avx512"));
    const std::string py = s.to_python();
    EXPECT_NE(py.find("winograd_product.local"), std::string::npos) << py;
    expect_matches_reference(s, 4 * 16 * 9);
    // The GPU's generic rules run it too (an SPMD program in the interpreter; NVRTC compiles it).
    Tensor xs = placeholder({1, 1, 5, 5, 4}, Float(32), "xs");
    Tensor ws = placeholder({1, 1, 3, 3, 4, 8}, Float(32), "ws");
    expect_default_gpu_matches({op::conv2d_nchwc_winograd(xs, ws, op::conv_params(1, 1))}, 4 * 9);
}

TEST(OpConv, NchwcWinogradErrors) {
    Tensor x = placeholder({1, 2, 8, 8, 8});
    Tensor w = placeholder({2, 2, 3, 3, 8, 16});
    EXPECT_THROW(op::conv2d_nchwc_winograd(x, placeholder({2, 2, 5, 5, 8, 16})), DSLError);
    EXPECT_THROW(op::conv2d_nchwc_winograd(x, w, op::conv_params(2, 1)), DSLError);
    EXPECT_THROW(op::conv2d_nchwc_winograd(x, w, op::conv_params(1, 2, 2)), DSLError);
    EXPECT_THROW(op::conv2d_nchwc_winograd(placeholder({1, 2, 8, 8, 8}, Float(16)),
                                           placeholder({2, 2, 3, 3, 8, 16}, Float(16))),
                 DSLError);
    EXPECT_THROW(op::conv2d_nchwc_winograd(x, placeholder({2, 3, 3, 3, 8, 16})), DSLError);
    op::Conv2DParams wide = op::conv_params(1, 1);
    wide.out_dtype = Float(16);
    try {
        op::conv2d_nchwc_winograd(x, w, wide);
        ADD_FAILURE() << "a float16 output was accepted";
    } catch (const DSLError& e) {
        EXPECT_NE(std::string(e.what()).find("parameter 'out_dtype' is float16"), std::string::npos)
            << e.what();
    }
}

// The NCHW operator: the input put in blocks (of 4: the widest of 16, 8, 4 dividing C = 12 and
// K = 20), the blocked convolution with the filters read from OIHW, the output back to NCHW;
// against conv2d_nchw in the reference interpreter (asymmetric padding, tiles past the output),
// the CPU default (the product's local cache, the two copies kept) through the loop interpreter
// and the JIT, with the weight constant (its transform once, outside the kernel) and not.
TEST(OpConv, NchwWinogradIsTheConvolution) {
    for (bool constant : {false, true}) {
        Tensor x = placeholder({2, 12, 9, 7}, Float(32), "x");
        Tensor w = placeholder({20, 12, 3, 3}, Float(32), "w", constant);
        op::Conv2DParams p;
        p.padding = {1, 0, 2, 1};
        Tensor direct = op::conv2d_nchw(x, w, p), winograd = op::conv2d_nchw_winograd(x, w, p);
        EXPECT_EQ(const_shape(winograd), (std::vector<int64_t>{2, 20, 10, 6}));
        std::vector<std::pair<Tensor, HostArray>> in = {
            {x, HostArray::random(Float(32), const_shape(x), 3)},
            {w, HostArray::random(Float(32), const_shape(w), 4)}};
        const HostArray want = evaluate_reference({direct}, in).at(0);
        const HostArray got = evaluate_reference({winograd}, in).at(0);
        CompareResult r = compare_to_reference(got, want, tolerance_for(Float(32), 4 * 12 * 9));
        EXPECT_TRUE(r.ok) << r.message();
        expect_default_cpu_matches({winograd}, 4 * 12 * 9);
        Schedule s = op::default_schedule({winograd}, Target("llvm -mcpu=skylake-avx512"));
        const std::string py = s.to_python();
        EXPECT_NE(py.find("winograd_product.local"), std::string::npos) << py;
        EXPECT_EQ(py.find("compute_inline"), std::string::npos) << py;  // the copies kept
        EXPECT_EQ(py.find("pre_transform") != std::string::npos, constant) << py;
        expect_matches_reference(s, 4 * 12 * 9);
    }
    // One channel in, three out: blocks of 1.
    Tensor x = placeholder({1, 1, 5, 6}, Float(32), "x");
    Tensor w = placeholder({3, 1, 3, 3}, Float(32), "w");
    expect_default_cpu_matches({op::conv2d_nchw_winograd(x, w, op::conv_params(1, 1))}, 9);
}

TEST(OpConv, NchwWinogradErrors) {
    Tensor x = placeholder({1, 8, 8, 8});
    Tensor w = placeholder({16, 8, 3, 3});
    EXPECT_THROW(op::conv2d_nchw_winograd(x, placeholder({16, 8, 5, 5})), DSLError);
    EXPECT_THROW(op::conv2d_nchw_winograd(x, w, op::conv_params(2, 1)), DSLError);
    EXPECT_THROW(op::conv2d_nchw_winograd(x, w, op::conv_params(1, 2, 2)), DSLError);
    EXPECT_THROW(
        op::conv2d_nchw_winograd(x, placeholder({16, 4, 3, 3}), op::conv_params(1, 1, 1, 2)),
        DSLError);
    EXPECT_THROW(op::conv2d_nchw_winograd(x, placeholder({16, 7, 3, 3})), DSLError);
    EXPECT_THROW(op::conv2d_nchw_winograd(placeholder({1, 8, 8, 8}, Float(16)),
                                          placeholder({16, 8, 3, 3}, Float(16))),
                 DSLError);
    try {
        op::conv2d_nchw_winograd(x, w, op::conv_params(1, 1, 2));
        ADD_FAILURE() << "a dilation of 2 was accepted";
    } catch (const DSLError& e) {
        EXPECT_NE(std::string(e.what()).find("parameter 'dilation'"), std::string::npos)
            << e.what();
    }
}

TEST(OpConv, NchwcLayoutErrors) {
    Tensor x = placeholder({1, 2, 8, 8, 8});
    EXPECT_THROW(op::conv2d_nchwc(x, placeholder({2, 3, 3, 3, 8, 16})), DSLError);
    EXPECT_THROW(op::conv2d_nchwc(x, placeholder({2, 2, 3, 3, 16, 16})), DSLError);
    EXPECT_THROW(op::conv2d_nchwc(x, placeholder({2, 2, 3, 3, 8, 16}), op::conv_params(1, 1, 1, 2)),
                 DSLError);
    EXPECT_THROW(op::nchw_to_nchwc(placeholder({1, 12, 4, 4}), 8), DSLError);
    EXPECT_THROW(op::nchw_to_nchwc(placeholder({1, 12, 4, 4}), 0), DSLError);
    EXPECT_THROW(op::conv2d_weight_to_nchwc(placeholder({24, 12, 3, 3}), 4, 16), DSLError);
    EXPECT_THROW(op::nchwc_to_nchw(placeholder({1, 12, 4, 4})), DSLError);
}

TEST(OpConv, NchwDilationTwoAndAsymmetricPadding) {
    Tensor x = placeholder({2, 2, 9, 10}), w = placeholder({3, 2, 3, 2});
    op::Conv2DParams p;
    p.dilation = {2, 2};
    p.padding = {1, 0, 2, 1};
    Tensor y = op::conv2d_nchw(x, w, p);
    EXPECT_EQ(const_shape(y), (std::vector<int64_t>{2, 3, 8, 9}));
    expect_default_schedules_match({y}, 12);
}

TEST(OpConv, NchwGroupsThree) {
    Tensor x = placeholder({1, 6, 7, 7}), w = placeholder({9, 2, 3, 3});
    expect_default_schedules_match({op::conv2d_nchw(x, w, op::conv_params(1, 1, 1, 3))}, 18);
}

TEST(OpConv, NhwcStrideGroupsAndDilation) {
    Tensor x = placeholder({1, 11, 9, 6}), w = placeholder({3, 3, 2, 9});
    expect_default_schedules_match({op::conv2d_nhwc(x, w, op::conv_params(2, 1, 1, 3))}, 18);
    expect_default_cpu_matches(
        {op::conv2d_nhwc(x, placeholder({3, 3, 6, 5}), op::conv_params(1, 2, 2))}, 54);
}

TEST(OpConv, DepthwiseWithMultiplier) {
    Tensor x = placeholder({1, 3, 9, 8}), w = placeholder({6, 1, 3, 3});
    Tensor y = op::depthwise_conv2d_nchw(x, w, op::conv_params(2, 1));
    EXPECT_EQ(const_shape(y), (std::vector<int64_t>{1, 6, 5, 4}));
    expect_default_schedules_match({y}, 9);
}

TEST(OpConv, TransposeStrideTwoWithOutputPadding) {
    Tensor x = placeholder({1, 3, 5, 4}), w = placeholder({3, 2, 3, 3});
    Tensor y = op::conv2d_transpose_nchw(x, w, op::conv_params(2, 1), {1, 0});
    EXPECT_EQ(const_shape(y), (std::vector<int64_t>{1, 2, 10, 7}));
    expect_default_schedules_match({y}, 27);
}

TEST(OpConv, TransposeInvertsAStridedConvShape) {
    Tensor x = placeholder({1, 2, 7, 7}), w = placeholder({2, 3, 3, 3});
    op::Conv2DParams p = op::conv_params(1, 0, 2);
    expect_default_cpu_matches({op::conv2d_transpose_nchw(x, w, p)}, 18);
}

}  // namespace
}  // namespace tessel::testing
