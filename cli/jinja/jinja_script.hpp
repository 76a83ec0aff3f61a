// The Python side of JinjaChatTemplate: builds the sandboxed environment,
// compiles and renders, and turns every failure into (kind, line, message)
// so that no Python exception has to cross into C++.
#pragma once

namespace hetero::jinja_script {

inline constexpr const char* kSource = R"PY(
import datetime
import json
import traceback

try:
    import jinja2
    import jinja2.ext
    import jinja2.sandbox
    _missing = None
except ImportError as e:
    _missing = str(e)


class TemplateRaised(Exception):
    pass


def _raise_exception(message):
    raise TemplateRaised(str(message))


def _strftime_now(fmt):
    return datetime.datetime.now().strftime(fmt)


# Templates call tojson on message contents; keep non-ASCII text as it is.
def _tojson(value, indent=None, ensure_ascii=False, sort_keys=False, separators=None):
    return json.dumps(value, indent=indent, ensure_ascii=ensure_ascii, sort_keys=sort_keys, separators=separators)


def _template_line(tb):
    line = 0
    for frame in traceback.extract_tb(tb):
        if frame.filename == "<template>":
            line = frame.lineno or 0
    return line


def compile_template(source):
    if _missing is not None:
        return None, ("missing", 0, _missing)
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    try:
        return env.from_string(source), None
    except jinja2.TemplateSyntaxError as e:
        return None, ("syntax", e.lineno or 0, e.message or str(e))
    except Exception as e:
        return None, ("error", 0, type(e).__name__ + ": " + str(e))


def render(template, messages_json, add_generation_prompt, bos_token, eos_token):
    try:
        text = template.render(messages=json.loads(messages_json), add_generation_prompt=add_generation_prompt,
                               bos_token=bos_token, eos_token=eos_token, tools=None)
        return ("ok", 0, text)
    except TemplateRaised as e:
        return ("raised", _template_line(e.__traceback__), str(e))
    except Exception as e:
        return ("error", _template_line(e.__traceback__), type(e).__name__ + ": " + str(e))
)PY";

}  // namespace hetero::jinja_script
