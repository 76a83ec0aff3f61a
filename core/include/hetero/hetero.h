/*
 * hetero.h: the embedding API of libhetero, for applications that run
 * language models across the machine's processors.
 *
 * Plain C (C99), usable from C++ and from any language with a C FFI. An app
 * opens a runtime (the provider plugins and their devices, chosen by a JSON
 * config or a provider list), loads a model on it (the partition solver
 * plans which device runs what), then generates text, completes a prompt or
 * chats through the model's own chat template, with a callback per piece of
 * text. `hetero run`, `hetero chat` and `hetero serve` run on the same
 * library code.
 *
 * Conventions:
 *  - Objects are opaque handles, created by *_open / *_load and released by
 *    the matching *_close / *_free (NULL is accepted and ignored).
 *  - Every parameter struct starts with struct_size; fill it with the
 *    *_params_init function first, then set the fields you need. Fields are
 *    only ever appended; a caller built against an older header passes a
 *    smaller struct_size and gets the defaults for the fields it lacks.
 *  - Calls return hetero_result. On failure, hetero_last_error() gives a
 *    message naming what failed (the file, key, provider or template line).
 *    The message is per thread and valid until that thread's next call.
 *  - Strings are UTF-8 and NUL-terminated unless a length is given. Strings
 *    returned by the library are owned by the handle they came from and stay
 *    valid until the handle is released, unless a function says otherwise.
 *  - Threads: a runtime may be shared by models used on different threads.
 *    A model runs one generation at a time: calls on one hetero_model must
 *    not overlap (use one model per concurrent stream). Callbacks run on the
 *    calling thread.
 *  - No call aborts the process on bad input; no C++ exception crosses it.
 *
 * "since" gives the API version (hetero_api_version()) a function or field
 * first appeared in.
 */
#ifndef HETERO_HETERO_H
#define HETERO_HETERO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HETERO_API __attribute__((visibility("default")))
#else
#define HETERO_API
#endif

#define HETERO_API_VERSION_MAJOR 1u
#define HETERO_API_VERSION_MINOR 1u
#define HETERO_API_VERSION ((HETERO_API_VERSION_MAJOR << 16) | HETERO_API_VERSION_MINOR)

typedef enum hetero_result {
    HETERO_RESULT_OK = 0,
    HETERO_RESULT_INVALID_ARGUMENT = 1, /* a NULL handle, a bad field value */
    HETERO_RESULT_NOT_FOUND = 2,        /* a file, provider or device that is not there */
    HETERO_RESULT_BAD_MODEL = 3,        /* a model file that cannot be read or run */
    HETERO_RESULT_NO_DEVICE = 4,        /* no usable device, or none can hold the model */
    HETERO_RESULT_DEVICE_FAILED = 5,    /* a device failed and no other could take over */
    HETERO_RESULT_TEMPLATE = 6,         /* the chat template failed to compile or render */
    HETERO_RESULT_CONTEXT_FULL = 7,     /* the prompt does not fit the context */
    HETERO_RESULT_CONFIG = 8,           /* the config is not valid */
    HETERO_RESULT_INTERNAL = 9          /* anything else; the message says what */
} hetero_result;

/* The API version this library implements, HETERO_API_VERSION of its header. since 1.0 */
HETERO_API uint32_t hetero_api_version(void);
/* The library's release, e.g. "0.1.0". Static storage. since 1.0 */
HETERO_API const char* hetero_version_string(void);
/* The message of this thread's last failed call ("" when none). since 1.0 */
HETERO_API const char* hetero_last_error(void);
/* A short name for a result code ("ok", "bad model", ...). Static storage. since 1.0 */
HETERO_API const char* hetero_result_name(hetero_result result);

/* ---- runtime: plugins and devices ---------------------------------------- */

typedef struct hetero_runtime hetero_runtime;

typedef struct hetero_runtime_params {
    size_t struct_size;
    /* A JSON config file (see config.example.json); NULL = $XDG_CONFIG_HOME/hetero/config.json when it exists. */
    const char* config_path;
    /* Config text instead of a file; wins over config_path. NULL = none. */
    const char* config_json;
    /* Comma-separated provider names in priority order ("opencl,cpu"); NULL or "" = the config's, or every one found. */
    const char* providers;
    /* Threads of the cpu provider; 0 = its default. */
    int32_t threads;
    /* Colon-separated directories searched for libhetero-ep-*.so after the default ones; NULL = none. */
    const char* plugin_dirs;
} hetero_runtime_params;

/* Fills *params with the defaults (all NULL / 0). since 1.0 */
HETERO_API void hetero_runtime_params_init(hetero_runtime_params* params);
/* Loads the provider plugins and discovers their devices. *out is set on
 * success and must be released with hetero_runtime_close. since 1.0 */
HETERO_API hetero_result hetero_runtime_open(const hetero_runtime_params* params, hetero_runtime** out);
/* Releases the runtime; every model loaded on it must be freed first. since 1.0 */
HETERO_API void hetero_runtime_close(hetero_runtime* runtime);
/* The usable devices, in priority order. since 1.0 */
HETERO_API size_t hetero_runtime_device_count(const hetero_runtime* runtime);
/* "cpu:0", "opencl:0", ... (NULL when index is out of range). since 1.0 */
HETERO_API const char* hetero_runtime_device_label(const hetero_runtime* runtime, size_t index);
/* The device's name as its provider reports it (NULL when out of range). since 1.0 */
HETERO_API const char* hetero_runtime_device_name(const hetero_runtime* runtime, size_t index);

/* ---- model: a file planned on the runtime's devices ---------------------- */

typedef struct hetero_model hetero_model;

typedef enum hetero_cache_type {
    HETERO_CACHE_AUTO = 0, /* f16 on GPU/NPU devices, f32 on CPU devices */
    HETERO_CACHE_F32 = 1,
    HETERO_CACHE_F16 = 2
} hetero_cache_type;

typedef struct hetero_model_params {
    size_t struct_size;
    /* A GGUF file or a llama2.c checkpoint; NULL = the small model that ships with hetero. */
    const char* path;
    /* tokenizer.bin for a llama2.c checkpoint; NULL = found beside it. */
    const char* tokenizer_path;
    /* Context length in tokens; 0 = the model's training context, clamped to [512, 4096]. */
    int32_t n_ctx;
    /* A hetero_cache_type (fields are fixed-width integers, never enums, so
     * any value an app passes can be read and refused). */
    int32_t cache_type;
    /* A Jinja chat template to use instead of the model's own; NULL = the
     * model's (ChatML when it has none). */
    const char* chat_template;
    /* What the plan is optimised for: the prompt and reply lengths in tokens
     * (0 = a quarter of the context, and 256). */
    int32_t expected_prompt_tokens;
    int32_t expected_reply_tokens;
} hetero_model_params;

/* Fills *params with the defaults. since 1.0 */
HETERO_API void hetero_model_params_init(hetero_model_params* params);
/* Opens the model, compiles its chat template, plans it on the runtime's
 * devices and builds its session. The runtime must outlive the model.
 * since 1.0 */
HETERO_API hetero_result hetero_model_load(hetero_runtime* runtime, const hetero_model_params* params, hetero_model** out);
HETERO_API void hetero_model_free(hetero_model* model);
/* general.name of the file, else its stem. since 1.0 */
HETERO_API const char* hetero_model_name(const hetero_model* model);
/* The context length the session uses. since 1.0 */
HETERO_API int32_t hetero_model_n_ctx(const hetero_model* model);
/* The plan as text: which device runs which layers, with predicted times.
 * Valid until the next generation on the model (a device failure re-plans). since 1.0 */
HETERO_API const char* hetero_model_plan(hetero_model* model);

/* ---- generation ----------------------------------------------------------- */

/* A bias added to one token's logit (hetero_generate_params.logit_bias). since 1.1 */
typedef struct hetero_logit_bias {
    int32_t token;
    float bias;
} hetero_logit_bias;

typedef struct hetero_generate_params {
    size_t struct_size;
    /* Most tokens to generate; <= 0 = until the context is full. Default 256. */
    int32_t max_tokens;
    /* Sampling: temperature 0 = greedy. Defaults 0.8, 40, 0.95. */
    float temperature;
    int32_t top_k; /* 0 = whole vocabulary */
    float top_p;   /* 1 = off */
    uint64_t seed;
    /* Stop strings (not part of the text); NULL / 0 = none. Used by
     * hetero_complete and hetero_chat. */
    const char* const* stop;
    size_t n_stop;
    /* since 1.1. The model's logits are adjusted first (repetition penalty,
     * then presence and frequency penalties, then logit_bias); temperature 0
     * then takes the largest, otherwise top_k, the temperature, top_p and
     * min_p cut the candidates in that order before one is drawn. */
    /* Drops tokens less likely than min_p times the likeliest; 0 = off, at most 1. */
    float min_p;
    /* A recent token's positive logit is divided by it, a negative one
     * multiplied; 1 = off, > 0. Recent: the last repetition_window tokens of
     * the prompt and reply (-1 = all of them, 0 = none; default 64). */
    float repetition_penalty;
    int32_t repetition_window;
    /* OpenAI's penalties over the reply so far: a token's logit loses
     * frequency_penalty per time it appeared and presence_penalty once if it
     * did. Each in [-2, 2]; 0 = off. */
    float presence_penalty;
    float frequency_penalty;
    /* Added to the logits of the tokens named, each in [-100, 100]; a token
     * id outside the vocabulary or named twice is refused. NULL / 0 = none. */
    const hetero_logit_bias* logit_bias;
    size_t n_logit_bias;
} hetero_generate_params;

HETERO_API void hetero_generate_params_init(hetero_generate_params* params);

/* Called with each piece of text as it becomes final (a piece is never
 * split inside a UTF-8 character). Return nonzero to go on, 0 to stop (the
 * generation then ends with HETERO_FINISH_CANCELLED). */
typedef int (*hetero_text_callback)(const char* text, size_t length, void* user_data);

typedef enum hetero_finish {
    HETERO_FINISH_STOP = 0,         /* an end-of-generation token or a stop string */
    HETERO_FINISH_LENGTH = 1,       /* max_tokens reached */
    HETERO_FINISH_CONTEXT_FULL = 2, /* the context holds no more tokens */
    HETERO_FINISH_CANCELLED = 3     /* the callback returned 0 */
} hetero_finish;

typedef struct hetero_generate_stats {
    size_t struct_size;
    int32_t n_prompt;    /* prompt tokens (BOS included) */
    int32_t n_reused;    /* prompt tokens the KV cache already held */
    int32_t n_generated; /* sampled tokens, the end token excluded */
    double prefill_seconds;
    double decode_seconds;
    int32_t finish; /* a hetero_finish */
} hetero_generate_stats;

/* Raw generation as `hetero run` does it: BOS and the prompt evaluated from
 * position 0, then tokens sampled until the model's end token or max_tokens.
 * The callback gets only the generated text (not the prompt). stats may be
 * NULL; when given, set its struct_size. since 1.0 */
HETERO_API hetero_result hetero_generate(hetero_model* model, const char* prompt, const hetero_generate_params* params,
                                         hetero_text_callback on_text, void* user_data, hetero_generate_stats* stats);

/* A completion of `prompt` (BOS added where the vocabulary wants it) that
 * stops at end tokens and the stop strings. Tokens the KV cache already holds
 * from an earlier call (a shared prefix) are not evaluated again. since 1.0 */
HETERO_API hetero_result hetero_complete(hetero_model* model, const char* prompt, const hetero_generate_params* params,
                                         hetero_text_callback on_text, void* user_data, hetero_generate_stats* stats);

typedef struct hetero_chat_message {
    const char* role; /* "system", "user", "assistant" */
    const char* content;
} hetero_chat_message;

/* Renders the messages through the model's chat template, opens an assistant
 * turn and generates the reply, stopping at the model's end-of-turn tokens.
 * The conversation so far stays in the KV cache, so the next call with the
 * same messages plus the reply and a new user message evaluates only the new
 * part. since 1.0 */
HETERO_API hetero_result hetero_chat(hetero_model* model, const hetero_chat_message* messages, size_t n_messages,
                                     const hetero_generate_params* params, hetero_text_callback on_text, void* user_data,
                                     hetero_generate_stats* stats);

/* The prompt text the template makes of the messages (with the opening of an
 * assistant turn when add_generation_prompt is nonzero). *out is allocated by
 * the library; release it with hetero_string_free. since 1.0 */
HETERO_API hetero_result hetero_chat_render(hetero_model* model, const hetero_chat_message* messages, size_t n_messages,
                                            int add_generation_prompt, char** out);
HETERO_API void hetero_string_free(char* text);

#ifdef __cplusplus
}
#endif

#endif /* HETERO_HETERO_H */
