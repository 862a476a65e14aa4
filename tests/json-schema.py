#!/usr/bin/env python3
"""json-schema.py - validate JSON documents against mgpu's JSON Schemas
(doc/record.schema.json, doc/results.schema.json) with nothing but Python.

Usage: json-schema.py [--def NAME] SCHEMA FILE...

Each FILE holds one JSON value (a record printed with --format=json, a
results.json); with --def NAME it is checked against the schema's
"#/$defs/NAME" instead of the whole schema.  Exit 0 when every file is
valid, 1 when one is not (a line per error: the file, where, what), 2 when
the schema or a file cannot be read.

CI installs no python3-jsonschema, so this is a validator of the subset of
JSON Schema (draft 2020-12) the two schemas use, and it refuses any other
keyword, so that a schema cannot lean on a rule nobody checks.  Where the
jsonschema module is installed it validates too, and the two must agree.
"""
import json
import re
import sys

ANNOTATIONS = {"$schema", "$id", "$comment", "title", "description", "$defs"}
KEYWORDS = {"$ref", "type", "enum", "const", "properties", "required",
            "additionalProperties", "items", "minItems", "maxItems", "minimum",
            "maximum", "minLength", "pattern"} | ANNOTATIONS


class SchemaError(Exception):
    pass


def is_type(value, name):
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "number":
        return number
    if name == "integer":
        return number and (isinstance(value, int) or float(value).is_integer())
    raise SchemaError("unknown type %r" % name)


def same(a, b):
    """JSON equality: true and 1 differ, 1 and 1.0 do not."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if is_type(a, "number") and is_type(b, "number"):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def resolve(root, ref):
    if not ref.startswith("#/"):
        raise SchemaError("$ref %r: only references inside the schema are read" % ref)
    node = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise SchemaError("$ref %r: nothing there" % ref)
        node = node[part]
    return node


def validate(root, schema, value, where, errors):
    """Append to ERRORS a (where, what) for each rule VALUE breaks."""
    if schema is True:
        return
    if schema is False:
        errors.append((where, "no value is allowed here"))
        return
    if not isinstance(schema, dict):
        raise SchemaError("%s: a schema is an object or a boolean" % where)
    unknown = set(schema) - KEYWORDS
    if unknown:
        raise SchemaError("keyword%s %s not in the subset this validator checks"
                          % ("s" if len(unknown) > 1 else "", ", ".join(sorted(unknown))))
    if "$ref" in schema:
        validate(root, resolve(root, schema["$ref"]), value, where, errors)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(is_type(value, t) for t in types):
            errors.append((where, "%s is not of type %s" % (json.dumps(value)[:60],
                                                           " or ".join(types))))
            return
    if "const" in schema and not same(value, schema["const"]):
        errors.append((where, "%s is not %s" % (json.dumps(value)[:60],
                                                 json.dumps(schema["const"]))))
    if "enum" in schema and not any(same(value, v) for v in schema["enum"]):
        errors.append((where, "%s is none of %s" % (json.dumps(value)[:60],
                                                     json.dumps(schema["enum"]))))
    if is_type(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append((where, "%r is below %r" % (value, schema["minimum"])))
        if "maximum" in schema and value > schema["maximum"]:
            errors.append((where, "%r is above %r" % (value, schema["maximum"])))
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            errors.append((where, "%r is shorter than %d" % (value, schema["minLength"])))
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append((where, "%r does not match %s" % (value, schema["pattern"])))
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            errors.append((where, "fewer than %d items" % schema["minItems"]))
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append((where, "more than %d items" % schema["maxItems"]))
        if "items" in schema:
            for i, item in enumerate(value):
                validate(root, schema["items"], item, "%s[%d]" % (where, i), errors)
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                errors.append((where, "%r is missing" % key))
        for key, item in value.items():
            inner = "%s.%s" % (where, key)
            if key in properties:
                validate(root, properties[key], item, inner, errors)
            elif "additionalProperties" in schema:
                validate(root, schema["additionalProperties"], item, inner, errors)


def jsonschema_verdict(schema, value):
    """Whether the jsonschema module finds VALUE valid, or None without it."""
    try:
        import jsonschema
    except ImportError:
        return None
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return not any(True for _ in cls(schema).iter_errors(value))


def errors_of(root, value, name=None):
    """The (where, what) of each rule VALUE breaks in ROOT (its definition
    NAME when given), checked by the jsonschema module too where there is
    one; SchemaError when the schema leaves the subset."""
    schema = resolve(root, "#/$defs/" + name) if name else root
    errors = []
    validate(root, schema, value, "$", errors)
    # jsonschema resolves "#/$defs/..." against the schema it is given: a
    # definition is checked as a schema of the same definitions.
    if name:
        whole = {"$schema": root.get("$schema"), "$defs": root.get("$defs", {}),
                 "$ref": "#/$defs/" + name}
    else:
        whole = root
    other = jsonschema_verdict(whole, value)
    if other is not None and other != (not errors):
        errors.append(("$", "the jsonschema module finds it %s, this validator %s"
                       % ("valid" if other else "invalid",
                          "valid" if not errors else "invalid")))
    return errors


def main(argv):
    args = argv[1:]
    name = None
    if len(args) >= 2 and args[0] == "--def":
        name, args = args[1], args[2:]
    if len(args) < 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        with open(args[0]) as f:
            root = json.load(f)
    except (OSError, ValueError) as e:
        print("%s: %s" % (args[0], e), file=sys.stderr)
        return 2
    status = 0
    for path in args[1:]:
        try:
            with open(path) as f:
                value = json.load(f)
            errors = errors_of(root, value, name)
        except (OSError, ValueError) as e:
            print("%s: not JSON: %s" % (path, e), file=sys.stderr)
            return 2
        except SchemaError as e:
            print("%s: %s" % (args[0], e), file=sys.stderr)
            return 2
        for where, what in errors:
            print("%s: %s: %s" % (path, where, what))
        if errors:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
