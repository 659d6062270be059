"""Serve the OR-Bench playground: `python app.py` (or `make run`; on Hugging Face Spaces as is).

Honours GRADIO_SERVER_NAME (default 127.0.0.1) and GRADIO_SERVER_PORT (default 7860).

The offline-friendly defaults `make run` exports are set here too (only where
unset), so a start without the Makefile, as a Space does, does not spend seconds
retrying LiteLLM's cost-map download or send telemetry.
"""

import os

OFFLINE_DEFAULTS = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_OFFLINE_MODE": "true",
    "GRADIO_ANALYTICS_ENABLED": "False",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}
for _name, _value in OFFLINE_DEFAULTS.items():
    os.environ.setdefault(_name, _value)

from orbench_play.ui import main  # noqa: E402 -- after the defaults: LiteLLM reads them when imported

if __name__ == "__main__":
    main()
