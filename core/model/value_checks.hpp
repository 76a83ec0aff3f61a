// Values checked, not trusted (private to core/model): a model whose norms,
// biases or embedding hold NaN or Inf, whose matrices do where sampled, or
// any of whose quantized blocks has a NaN or Inf scale, is refused at load
// with the tensor named, instead of producing "<unk><unk>..." text.
// Matrices are sampled, not decoded whole (that would read the file twice),
// but every block's f16 scales are read: a non-finite scale can vanish in
// the int8-activation kernels before the session's check of every logit.
#pragma once

#include <hetero/model/model.hpp>

namespace hetero::model_detail {

// Throws hetero::Error naming the file, the tensor and the element.
void check_weight_values(const ModelFile& m);

// The f16 scales of every block of every quantized weight (a part of
// check_weight_values); throws hetero::Error naming the file, the tensor,
// its type and the block.
void check_block_scales(const ModelFile& m);

}  // namespace hetero::model_detail
