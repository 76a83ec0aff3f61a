// Runs a llama-family model over a Plan: uploads weights once per device,
// keeps the KV cache on the device owning each layer, compiles one executable
// per segment and batch size, and moves activations between devices.
#pragma once

#include <hetero/model/model.hpp>
#include <hetero/runtime/plan.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hetero {

// Element type of the KV cache. automatic: f16 on GPU and NPU devices (half
// the cache traffic; their attention kernels compute in f16 anyway), f32 on
// CPU devices (runs that reproduce the scalar reference exactly).
enum class CacheType { automatic, f32, f16 };
// "auto", "f32" or "f16"; throws hetero::Error naming the value otherwise.
CacheType cache_type_from_name(const std::string& name);

struct SessionOptions {
    int32_t n_ctx = 0;        // 0 = the training context, clamped to [512, 4096]
    int32_t max_batch = 512;  // longer prompts are evaluated in chunks of this size
    CacheType cache_type = CacheType::automatic;
};

// The context a session uses: `requested` when > 0, else the training
// context clamped to [512, 4096] (some converters record less than the model
// was trained with).
int32_t context_length(const LlamaHParams& hp, int32_t requested);

// Time spent per segment, for the "which provider ran what" report.
struct SegmentStats {
    std::string label;
    double seconds = 0;
    int64_t runs = 0;
};

class Session {
public:
    Session(const ModelFile& model, const Plan& plan, const SessionOptions& options = {});
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // Evaluates tokens at positions pos, pos+1, ...; returns the logits of the
    // last token (valid until the next call).
    const std::vector<float>& forward(const std::vector<int32_t>& tokens, int32_t pos);

    int32_t n_ctx() const { return n_ctx_; }
    const Plan& plan() const { return plan_; }
    std::vector<SegmentStats> stats() const;

private:
    struct SegmentState;
    void evaluate_chunk(const int32_t* tokens, int32_t n, int32_t pos);

    const ModelFile& model_;
    Plan plan_;
    SessionOptions options_;
    int32_t n_ctx_ = 0;
    std::vector<std::unique_ptr<SegmentState>> segments_;
    std::vector<float> logits_;
    std::vector<float> transfer_;  // host staging between devices
};

}  // namespace hetero
