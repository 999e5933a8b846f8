// Features, group 2: how a store touches each buffer (access type, bytes, unique bytes, cache
// lines, unique lines, reuse type, distance and count, stride), the five with the most bytes
// first. Values worked out by hand from the printed IR (64-byte cache lines, float32).
#include "unit/FeaturesTestUtil.h"

using namespace tessel;
using tessel::testing::Gemm;
using tessel::testing::raw_features;
using tessel::testing::RawFeatures;

namespace {

void expect_one_hot(const RawFeatures& f, int row, const std::string& prefix,
                    const std::vector<std::string>& names, const std::string& set) {
    for (const std::string& n : names) EXPECT_FEATURE(f, row, prefix + n, n == set ? 1 : 0);
}

void expect_access(const RawFeatures& f, int row, int slot, const std::string& type) {
    expect_one_hot(f, row, "B" + std::to_string(slot) + ".acc_type.",
                   {"read", "write", "read_write"}, type);
}

void expect_reuse(const RawFeatures& f, int row, int slot, const std::string& type) {
    expect_one_hot(f, row, "B" + std::to_string(slot) + ".reuse_type.",
                   {"loop_multiple_read", "serial_multiple_read_write", "no_reuse"}, type);
}

}  // namespace

TEST(FeaturesBufferAccess, TransposeStridesAndLines) {
    // B[i, j] = A[j, i], 16 x 16: loops i, j (256 executions).
    Tensor A = placeholder({16, 16}, Float(32), "A");
    Tensor B = compute(
        {16, 16}, [&](Var i, Var j) { return A(j, i); }, "B");
    RawFeatures f = raw_features(create_schedule({B}), {A, B});
    ASSERT_EQ(f.m.rows, 1);
    // Equal bytes (256 * 4 each): the store's own buffer B comes first, then A.
    expect_access(f, 0, 0, "write");
    expect_access(f, 0, 1, "read");
    for (int slot : {0, 1}) {
        std::string b = "B" + std::to_string(slot) + ".";
        EXPECT_FEATURE(f, 0, b + "bytes", 1024);
        EXPECT_FEATURE(f, 0, b + "unique_bytes", 1024);
        // The whole 16 x 16 array is one contiguous run: 1024 bytes / 64 per line.
        EXPECT_FEATURE(f, 0, b + "unique_lines", 16);
        // Every loop moves both buffers, and each is touched by one statement: no reuse.
        expect_reuse(f, 0, slot, "no_reuse");
        EXPECT_FEATURE(f, 0, b + "reuse_ct", 0);
    }
    // B moves 1 element (4 bytes) per j: 256 * 4 / 64 = 16 lines. A moves 16 elements (64
    // bytes, a whole line) per j: 256 lines.
    EXPECT_FEATURE(f, 0, "B0.stride", 1);
    EXPECT_FEATURE(f, 0, "B0.lines", 16);
    EXPECT_FEATURE(f, 0, "B1.stride", 16);
    EXPECT_FEATURE(f, 0, "B1.lines", 256);
    // Slots 2..4 are empty.
    for (int slot : {2, 3, 4})
        for (const char* n : {"bytes", "acc_type.read", "reuse_type.no_reuse", "stride"})
            EXPECT_FEATURE(f, 0, "B" + std::to_string(slot) + "." + n, 0);
}

TEST(FeaturesBufferAccess, GemmUpdateReuse) {
    // 16^3 GEMM, j split by 4 and vectorised innermost: the update runs in
    //   i0(16) i1.outer(4) k(16) i1.inner(4): C[i0, o*4+n] = C[...] + A[i0, k] * B[k, o*4+n]
    Gemm g(16);
    Schedule s = create_schedule({g.C});
    int c = s.stage_of(g.C);
    s.split(c, 1, 4);
    s.reorder(c, {0, 1, 3, 2});
    s.vectorize(c, 3);
    RawFeatures f = raw_features(s, g.args());
    ASSERT_EQ(f.m.rows, 2);
    // C: read and written (2 accesses x 4096 x 4 bytes) first; then A and B (16384 bytes each).
    expect_access(f, 1, 0, "read_write");
    EXPECT_FEATURE(f, 1, "B0.bytes", 32768);
    EXPECT_FEATURE(f, 1, "B0.unique_bytes", 1024);
    EXPECT_FEATURE(f, 1, "B0.lines", 256);  // moves 4 bytes per inner iteration: 4096 / 16
    EXPECT_FEATURE(f, 1, "B0.unique_lines", 16);
    // Loop k does not move C: reused 16 times; between two uses the inner loop (4 iterations)
    // touches C 16 + A 4 + B 16 bytes.
    expect_reuse(f, 1, 0, "loop_multiple_read");
    EXPECT_FEATURE(f, 1, "B0.reuse_ct", 16);
    EXPECT_FEATURE(f, 1, "B0.reuse_dis_iter", 4);
    EXPECT_FEATURE(f, 1, "B0.reuse_dis_bytes", 36);
    EXPECT_FEATURE(f, 1, "B0.bytes_d_reuse_ct", 2048);
    EXPECT_FEATURE(f, 1, "B0.unique_bytes_d_reuse_ct", 64);
    EXPECT_FEATURE(f, 1, "B0.lines_d_reuse_ct", 16);
    EXPECT_FEATURE(f, 1, "B0.unique_lines_d_reuse_ct", 1);
    EXPECT_FEATURE(f, 1, "B0.stride", 1);
    // A[i0, k]: the innermost loop does not move it (stride 0): reused 4 times at distance 1;
    // k moves it by one element: 4096 / 4 iterations * 4 / 64 = 64 lines.
    expect_access(f, 1, 1, "read");
    EXPECT_FEATURE(f, 1, "B1.bytes", 16384);
    EXPECT_FEATURE(f, 1, "B1.unique_bytes", 1024);
    EXPECT_FEATURE(f, 1, "B1.lines", 64);
    expect_reuse(f, 1, 1, "loop_multiple_read");
    EXPECT_FEATURE(f, 1, "B1.reuse_ct", 4);
    EXPECT_FEATURE(f, 1, "B1.reuse_dis_iter", 1);
    EXPECT_FEATURE(f, 1, "B1.reuse_dis_bytes", 0);
    EXPECT_FEATURE(f, 1, "B1.stride", 0);
    // B[k, o*4+n]: every loop but i0 moves it; i0 re-reads all of it, 16 times, after the
    // 4 * 16 * 4 = 256 iterations of i1.outer's body, which touch 1216 bytes (the init's C 64,
    // the update's C 64, A 64 and B 1024).
    expect_reuse(f, 1, 2, "loop_multiple_read");
    EXPECT_FEATURE(f, 1, "B2.reuse_ct", 16);
    EXPECT_FEATURE(f, 1, "B2.reuse_dis_iter", 256);
    EXPECT_FEATURE(f, 1, "B2.reuse_dis_bytes", 1216);
    EXPECT_FEATURE(f, 1, "B2.lines", 256);
}

TEST(FeaturesBufferAccess, SerialReuseBetweenStatements) {
    // The init C[i0, o*4+n] = 0 in i0(16) i1.outer(4) i1.inner(4): i1.inner and i1.outer move
    // C, and i1.outer's body holds two statements touching C (the init and the update): serial
    // reuse, count 2 - 1, at the distance of one i1.outer iteration: (4 * 4) / 4 iterations and
    // 1216 / 4 of the bytes a whole i1.outer loop touches.
    Gemm g(16);
    Schedule s = create_schedule({g.C});
    int c = s.stage_of(g.C);
    s.split(c, 1, 4);
    s.reorder(c, {0, 1, 3, 2});
    s.vectorize(c, 3);
    RawFeatures f = raw_features(s, g.args());
    expect_access(f, 0, 0, "write");
    EXPECT_FEATURE(f, 0, "B0.bytes", 1024);
    expect_reuse(f, 0, 0, "serial_multiple_read_write");
    EXPECT_FEATURE(f, 0, "B0.reuse_ct", 1);
    EXPECT_FEATURE(f, 0, "B0.reuse_dis_iter", 4);
    EXPECT_FEATURE(f, 0, "B0.reuse_dis_bytes", 304);
}

TEST(FeaturesBufferAccess, FiveBuffersByBytes) {
    // out = a + 2 b + 3 c + 4 d + 5 e + 6 f over 8 elements with reads of different counts:
    // the slots hold the five buffers with the most bytes (the output and the inputs read
    // most), f (read once) is left out.
    std::vector<Tensor> in;
    for (const char* n : {"a", "b", "c", "d", "e", "f"})
        in.push_back(placeholder({8}, Float(32), n));
    Tensor out = compute(
        {8},
        [&](Var i) {
            return in[0](i) * in[0](i) * in[0](i) + in[1](i) * in[1](i) + in[2](i) * in[2](i) +
                   in[3](i) * in[3](i) + in[4](i) + in[5](i);
        },
        "out");
    std::vector<Tensor> args = in;
    args.push_back(out);
    RawFeatures f = raw_features(create_schedule({out}), args);
    EXPECT_FEATURE(f, 0, "B0.bytes", 96);  // a: 3 reads x 8 x 4
    expect_access(f, 0, 0, "read");
    for (int slot : {1, 2, 3}) EXPECT_FEATURE(f, 0, "B" + std::to_string(slot) + ".bytes", 64);
    EXPECT_FEATURE(f, 0, "B4.bytes", 32);  // out, written once: before e and f (stable order)
    expect_access(f, 0, 4, "write");
}
