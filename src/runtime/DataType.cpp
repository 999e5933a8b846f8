#include "tessel/runtime/DataType.h"

#include "tessel/Error.h"

namespace tessel {

std::string DataType::str() const {
    std::string name;
    switch (code) {
        case DataTypeCode::Int: name = "int"; break;
        case DataTypeCode::UInt: name = "uint"; break;
        case DataTypeCode::Float: name = "float"; break;
        case DataTypeCode::BFloat: name = "bfloat"; break;
        case DataTypeCode::Handle: name = "handle"; break;
        case DataTypeCode::Bool: name = "bool"; break;
    }
    if (code != DataTypeCode::Bool) name += std::to_string(bits);
    if (lanes != 1) name += "x" + std::to_string(lanes);
    return name;
}

DataType DataType::from_dlpack(dlpack::DLDataType t) {
    switch (t.code) {
        case dlpack::kDLInt:
        case dlpack::kDLUInt:
        case dlpack::kDLFloat:
        case dlpack::kDLOpaqueHandle:
        case dlpack::kDLBfloat:
        case dlpack::kDLBool: return {static_cast<DataTypeCode>(t.code), t.bits, t.lanes};
        default:
            TESSEL_THROW(RuntimeError) << "DLPack dtype code " << int(t.code) << " (bits "
                                       << int(t.bits) << ") is not supported by tessel";
    }
}

}  // namespace tessel
