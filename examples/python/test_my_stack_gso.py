# Check your own stack's TCP segmentation against the kernel's (ofld), in ten lines.
# Run: pytest examples/python   (my_stack.py stands for your implementation)
import pytest, ofld
from my_stack import segment, tso_frame    # yours: segment(frame, mss) -> list of frames

@pytest.mark.parametrize("mss", [536, 1000, 1448, 8948])
@pytest.mark.parametrize("payload", [1, 3000, 64000])
def test_segmentation_matches_kernel(mss, payload):
    frame = tso_frame(payload)
    assert segment(frame, mss) == [bytes(s) for s in ofld.gso(frame, mss=mss)]
