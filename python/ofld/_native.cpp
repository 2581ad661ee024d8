// ofld._native: the batch calls of the Python package, marshalled in C++ (pybind11).
//
// The package reaches libofld through its C API (include/ofld/ofld.h). Most entry points are
// called with ctypes (ofld/_capi.py); the three whose cost is per frame or per byte of output —
// GRO receive of a batch, taking GRO's outputs, and GSO of one frame into a fresh buffer — are
// called from here, so that a 64-frame batch crosses the boundary without a join, a lengths
// array, a zero-filled output buffer or a ctypes conversion per argument (docs/python.md has
// the measurement). Handles are the C API's opaque pointers, passed as integers from the
// ctypes side (the same libofld.so is mapped once: this module links it by its SONAME).
//
// Each function returns the C API's status (0 or OFLD_E_*): the Python side raises the
// exception named by it, with ofld_last_reason() (per thread, and the call stays on the
// calling thread while the GIL is released). Buffers: any object with the buffer protocol
// (bytes, bytearray, memoryview, numpy arrays); a non-contiguous one is copied once.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "ofld/ofld.h"

namespace py = pybind11;

namespace {

// A frame's bytes, held while the GIL is released: a strong reference to the object, and for
// anything but exact `bytes` a buffer view (released on destruction).
class Held {
 public:
  Held() = default;
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
  Held(Held&& o) noexcept : obj_(o.obj_), view_(o.view_), has_view_(o.has_view_) {
    o.obj_ = nullptr;
    o.has_view_ = false;
  }
  ~Held() {
    if (has_view_) PyBuffer_Release(&view_);
    Py_XDECREF(obj_);
  }

  // False with a Python error set when `o` has no byte buffer.
  bool take(PyObject* o, const uint8_t** data, size_t* len) {
    if (PyBytes_CheckExact(o)) {
      Py_INCREF(o);
      obj_ = o;
      *data = reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(o));
      *len = static_cast<size_t>(PyBytes_GET_SIZE(o));
      return true;
    }
    if (PyObject_GetBuffer(o, &view_, PyBUF_SIMPLE) == 0) {
      has_view_ = true;
    } else {
      // not C-contiguous (a strided memoryview or array): one copy, as bytes
      PyErr_Clear();
      PyObject* b = PyBytes_FromObject(o);
      if (b == nullptr) return false;
      obj_ = b;  // owned
      *data = reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(b));
      *len = static_cast<size_t>(PyBytes_GET_SIZE(b));
      return true;
    }
    *data = static_cast<const uint8_t*>(view_.buf);
    *len = static_cast<size_t>(view_.len);
    return true;
  }

 private:
  PyObject* obj_ = nullptr;
  Py_buffer view_{};
  bool has_view_ = false;
};

template <typename T>
T* handle(std::uintptr_t h) {
  if (h == 0) throw py::value_error("ofld: the engine handle is closed");
  return reinterpret_cast<T*>(h);
}

// A bytearray of n bytes, not zero-filled (every byte is written by the C API before use).
py::object uninit_bytearray(size_t n) {
  PyObject* b = PyByteArray_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(n));
  if (b == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(b);
}

uint8_t* bytearray_data(const py::object& b) {
  return reinterpret_cast<uint8_t*>(PyByteArray_AS_STRING(b.ptr()));
}

// napi_gro_receive of every frame of the iterable `frames` (ofld_gro_receive): one call, the
// frames' own bytes, no copy on this side.
int gro_receive(std::uintptr_t h, py::handle frames, int ip_summed, int csum_level,
                std::uint64_t now_ns) {
  auto* g = handle<ofld_gro>(h);
  PyObject* seq = PySequence_Fast(frames.ptr(), "ofld: frames must be an iterable of buffers");
  if (seq == nullptr) throw py::error_already_set();
  py::object seq_ref = py::reinterpret_steal<py::object>(seq);
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  PyObject** items = PySequence_Fast_ITEMS(seq);
  std::vector<Held> held(static_cast<size_t>(n));
  std::vector<ofld_frame> fr(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!held[static_cast<size_t>(i)].take(items[i], &fr[static_cast<size_t>(i)].data,
                                          &fr[static_cast<size_t>(i)].len))
      throw py::error_already_set();
  int r;
  {
    py::gil_scoped_release nogil;
    r = ofld_gro_receive(g, fr.data(), fr.size(), ip_summed, csum_level, now_ns);
  }
  return r;
}

// Every pending GRO output end to end (ofld_gro_next_all), after ofld_gro_flush(now_ns, all)
// when `flush`: (status, bytearray of the frames, bytearray of n ofld_seg_info, n).
py::tuple gro_take(std::uintptr_t h, int flush, std::uint64_t now_ns, int all, int finish) {
  auto* g = handle<ofld_gro>(h);
  if (flush) {
    const int fr = ofld_gro_flush(g, now_ns, all);
    if (fr != OFLD_OK) return py::make_tuple(fr, py::none(), py::none(), 0);
  }
  const size_t cnt = ofld_gro_pending(g);
  size_t used = 0, n = 0;
  py::object info = uninit_bytearray(cnt * sizeof(ofld_seg_info));
  auto* segs = reinterpret_cast<ofld_seg_info*>(bytearray_data(info));
  // sizes first (nothing is taken on OFLD_E_NOSPC), then the copy into an exact buffer
  int r = ofld_gro_next_all(g, nullptr, 0, &used, finish, segs, cnt, &n);
  py::object out = uninit_bytearray(used);
  if (r == OFLD_E_NOSPC || r == OFLD_OK) {
    py::gil_scoped_release nogil;
    r = ofld_gro_next_all(g, used ? bytearray_data(out) : nullptr, used, &used, finish, segs, cnt,
                          &n);
  }
  return py::make_tuple(r, out, info, n);
}

// GSO of one frame (ofld_gso_run + ofld_gso_copy_all): (status, bytearray of the segments,
// bytearray of n ofld_seg_info, n). `vnet`: None or a buffer holding one ofld_vnet_hdr.
py::tuple gso_segment(std::uintptr_t h, py::handle frame, py::handle vnet, std::uint16_t gso_size,
                      int input_seeds) {
  auto* g = handle<ofld_gso>(h);
  Held fh;
  const uint8_t* data = nullptr;
  size_t len = 0;
  if (!fh.take(frame.ptr(), &data, &len)) throw py::error_already_set();
  ofld_vnet_hdr vh{};
  const ofld_vnet_hdr* vp = nullptr;
  if (!vnet.is_none()) {
    Held vhold;
    const uint8_t* vd = nullptr;
    size_t vl = 0;
    if (!vhold.take(vnet.ptr(), &vd, &vl)) throw py::error_already_set();
    if (vl != sizeof vh) throw py::value_error("ofld: vnet must hold one ofld_vnet_hdr");
    std::memcpy(&vh, vd, sizeof vh);
    vp = &vh;
  }
  int r;
  {
    py::gil_scoped_release nogil;
    r = ofld_gso_run(g, data, len, vp, gso_size, input_seeds);
  }
  if (r != OFLD_OK) return py::make_tuple(r, py::none(), py::none(), 0);
  const size_t cnt = ofld_gso_count(g);
  size_t used = 0, n = 0;
  py::object info = uninit_bytearray(cnt * sizeof(ofld_seg_info));
  auto* segs = reinterpret_cast<ofld_seg_info*>(bytearray_data(info));
  r = ofld_gso_copy_all(g, nullptr, 0, &used, segs, cnt, &n);  // sizes
  py::object out = uninit_bytearray(used);
  if (r == OFLD_E_NOSPC || r == OFLD_OK) {
    py::gil_scoped_release nogil;
    r = ofld_gso_copy_all(g, used ? bytearray_data(out) : nullptr, used, &used, segs, cnt, &n);
  }
  return py::make_tuple(r, out, info, n);
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "ofld's batch calls (GRO receive/take, GSO) over the C API; internal to the package.";
  m.attr("SEG_INFO_SIZE") = sizeof(ofld_seg_info);
  m.attr("VNET_HDR_SIZE") = sizeof(ofld_vnet_hdr);
  m.def("gro_receive", &gro_receive, py::arg("handle"), py::arg("frames"), py::arg("ip_summed"),
        py::arg("csum_level"), py::arg("now_ns"));
  m.def("gro_take", &gro_take, py::arg("handle"), py::arg("flush"), py::arg("now_ns"),
        py::arg("all"), py::arg("finish"));
  m.def("gso_segment", &gso_segment, py::arg("handle"), py::arg("frame"), py::arg("vnet"),
        py::arg("gso_size"), py::arg("input_seeds"));
}
