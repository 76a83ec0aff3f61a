// Values checked, not trusted (private to core/model): a model whose norms,
// biases or embedding hold NaN or Inf, or whose matrices do where sampled,
// is refused at load with the tensor named, instead of producing
// "<unk><unk>..." text. Matrices are sampled, not read whole (that would
// read the file twice); the session checks every logit it returns.
#pragma once

#include <hetero/model/model.hpp>

namespace hetero::model_detail {

// Throws hetero::Error naming the file, the tensor and the element.
void check_weight_values(const ModelFile& m);

}  // namespace hetero::model_detail
