"""Serve the OR-Bench playground: `python app.py` (or `make run`; on Hugging Face Spaces as is).

Honours GRADIO_SERVER_NAME (default 127.0.0.1) and GRADIO_SERVER_PORT (default 7860).
"""

from orbench_play.ui import main

if __name__ == "__main__":
    main()
