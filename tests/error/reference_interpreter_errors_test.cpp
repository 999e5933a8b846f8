// Reference interpreter: every user mistake is a RuntimeError naming the tensor at fault.
#include <gtest/gtest.h>

#include "tessel/te/Operation.h"
#include "tessel/te/ReferenceInterpreter.h"

using namespace tessel;

namespace {

/// Runs `fn`, expects a RuntimeError whose message contains every one of `parts`.
template <typename F>
void expect_runtime_error(F fn, const std::vector<std::string>& parts) {
    try {
        fn();
        ADD_FAILURE() << "expected RuntimeError";
    } catch (const RuntimeError& e) {
        std::string m = e.what();
        for (const std::string& p : parts) EXPECT_NE(m.find(p), std::string::npos) << m;
    }
}

}  // namespace

TEST(ReferenceErrors, ReadPastTheEnd) {
    Tensor A = placeholder({4}, Float(32), "A");
    Tensor B = compute(
        {4}, [&](Var i) { return A(i + 1); }, "B");
    HostArray a = HostArray::random(Float(32), {4}, 1);
    expect_runtime_error(
        [&] {
            evaluate_reference({B}, {{A, a}});
        },
        {"'A'", "'B'", "[4]", "shape [4]"});
}

TEST(ReferenceErrors, NegativeIndexInTwoDims) {
    Tensor A = placeholder({3, 5}, Int(32), "A");
    Tensor B = compute(
        {3, 5}, [&](Var i, Var j) { return A(i, j - 1); }, "B");
    HostArray a = HostArray::random(Int(32), {3, 5}, 1);
    expect_runtime_error([&] { evaluate_reference({B}, {{A, a}}); }, {"'A'", "[0, -1]", "[3, 5]"});
}

TEST(ReferenceErrors, MissingInput) {
    Tensor A = placeholder({4}, Float(32), "A");
    Tensor W = placeholder({4}, Float(32), "W");
    Tensor B = compute(
        {4}, [&](Var i) { return A(i) * W(i); }, "B");
    HostArray a = HostArray::random(Float(32), {4}, 1);
    expect_runtime_error([&] { evaluate_reference({B}, {{A, a}}); }, {"'W'", "no input"});
}

TEST(ReferenceErrors, WrongShape) {
    Tensor A = placeholder({4, 2}, Float(32), "A");
    Tensor B = compute(
        {4, 2}, [&](Var i, Var j) { return A(i, j); }, "B");
    HostArray a = HostArray::random(Float(32), {2, 4}, 1);
    expect_runtime_error([&] { evaluate_reference({B}, {{A, a}}); }, {"'A'", "[2, 4]", "[4, 2]"});
}

TEST(ReferenceErrors, WrongDtype) {
    Tensor A = placeholder({4}, Float(32), "A");
    Tensor B = compute(
        {4}, [&](Var i) { return A(i); }, "B");
    HostArray a = HostArray::random(Float(16), {4}, 1);
    expect_runtime_error([&] { evaluate_reference({B}, {{A, a}}); }, {"'A'", "float16", "float32"});
}

TEST(ReferenceErrors, InputForAComputedTensorOrTwice) {
    Tensor A = placeholder({4}, Float(32), "A");
    Tensor B = compute(
        {4}, [&](Var i) { return A(i); }, "B");
    HostArray a = HostArray::random(Float(32), {4}, 1);
    expect_runtime_error(
        [&] {
            evaluate_reference({B}, {{A, a}, {B, a}});
        },
        {"'B'", "placeholder"});
    expect_runtime_error([&] { evaluate_reference({B}, {{A, a}, {A, a}}); }, {"'A'", "two inputs"});
}
