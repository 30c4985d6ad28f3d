#!/usr/bin/env python3
"""Holds template.yaml to AWS's own tools: the CloudFormation linter (cfn-lint, errors, warnings and
informational findings alike) and the SAM translator, which turns the Serverless resources into the
CloudFormation that a deploy creates. Exits non-zero on any finding, or when either tool is missing.

    python3 infra/aws-lint/check_template.py [template.yaml] [--out translated.json]

A cfn-lint rule may be switched off only in the template's own Metadata.cfn-lint, with the reason beside it.
"""
import json
import os
import subprocess
import sys


def main(argv):
    template = "template.yaml"
    out = None
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--out":
            out = args.pop(0)
        else:
            template = a
    try:
        import cfnlint  # noqa: F401
        import samtranslator
        from samtranslator.translator.transform import transform
        from samtranslator.translator.managed_policy_translator import ManagedPolicyLoader
        from cfnlint.decode import decode
    except ImportError as e:
        print(f"check_template: AWS's linter or SAM translator is missing ({e}); install cfn-lint with "
              "aws-sam-translator into this Python", file=sys.stderr)
        return 2

    lint = subprocess.run([sys.executable, "-c", "import sys; from cfnlint.runner import main; sys.exit(main())", "--include-checks", "I", "--format", "parseable",
                           "--", template], capture_output=True, text=True)
    findings = [line for line in lint.stdout.splitlines() if line.strip()]
    if lint.returncode != 0 or findings or lint.stderr.strip():
        print(f"cfn-lint {template}: exit {lint.returncode}", file=sys.stderr)
        for line in findings:
            print("  " + line, file=sys.stderr)
        if lint.stderr.strip():
            print(lint.stderr, file=sys.stderr)
        return 1

    parsed, matches = decode(template)
    if matches:
        for m in matches:
            print(f"  {m}", file=sys.stderr)
        return 1

    class NoManagedPolicies(ManagedPolicyLoader):
        """The template names no AWS managed policy by name, so nothing is looked up in IAM."""

        def __init__(self):
            pass

        def load(self):
            return {}

    # What `sam package` / `aws cloudformation package` does before the transform runs in CloudFormation:
    # every local CodeUri and DefinitionUri becomes the S3 object it uploads.
    fragment = json.loads(json.dumps(parsed, default=str))
    packaged = []
    for section in [fragment.get("Globals", {}).get("Function", {})] + [
            r.get("Properties", {}) for r in fragment.get("Resources", {}).values()]:
        for key in ("CodeUri", "DefinitionUri"):
            value = section.get(key)
            if isinstance(value, str) and not value.startswith("s3://"):
                local = os.path.join(os.path.dirname(os.path.abspath(template)), value)
                if key == "DefinitionUri" and not os.path.exists(local):
                    print(f"{template}: {key} {value} does not exist", file=sys.stderr)
                    return 1
                section[key] = "s3://lifeline-artifacts/" + os.path.basename(value)
                packaged.append(value)

    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    try:
        translated = transform(fragment, {}, NoManagedPolicies())
    except Exception as e:  # the translator reports an invalid SAM document as an exception
        print(f"SAM translator {samtranslator.__version__}: {template} does not translate: {e}", file=sys.stderr)
        return 1
    resources = translated.get("Resources", {})
    kinds = {}
    for r in resources.values():
        kinds[r["Type"]] = kinds.get(r["Type"], 0) + 1
    if out:
        with open(out, "w") as f:
            json.dump(translated, f, indent=1, sort_keys=True, default=str)
    import cfnlint.version
    print(f"cfn-lint {cfnlint.version.__version__}: {template} clean (errors, warnings, informational); "
          f"SAM translator {samtranslator.__version__}: {len(resources)} resources "
          f"({', '.join(f'{v} {k}' for k, v in sorted(kinds.items()))})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
