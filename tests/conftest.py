import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = os.path.join(ROOT, 'notebooks')
sys.path.insert(0, ROOT)  # `import helpers` even without the editable install
