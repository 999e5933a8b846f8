// What the DAG writer and reader share (te/Serialize.h documents the format).
#pragma once

#include <cstddef>
#include <string>

namespace tessel::internal {

/// A path segment for an element of an array field: "ops[2]".
inline std::string indexed(const char* key, size_t i) {
    return std::string(key) + "[" + std::to_string(i) + "]";
}

/// The value of the "format" field.
inline constexpr const char* kDagJsonFormat = "tessel.dag";

}  // namespace tessel::internal

// clang-format off
/// The binary expression nodes, written {"node": <name>, "a": ..., "b": ...}.
#define TESSEL_FOR_EACH_SERIALIZED_BINARY_NODE(X) \
    X(Add) X(Sub) X(Mul) X(Div) X(Mod) X(FloorDiv) X(FloorMod) X(Min) X(Max) \
    X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE) X(And) X(Or)
// clang-format on
