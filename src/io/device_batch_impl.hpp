// Internal: the read/write batch loops shared by io::Tap and io::Tun (device_batch.hpp).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ofld/io/device_batch.hpp"
#include "ofld/io/vnet_writer.hpp"

namespace ofld::io::detail {

/// Up to `max` non-blocking reads of `fd` into `buf` (a new kDeviceReadBuf buffer when it is
/// null or the sink kept a reference to it);
/// each frame, its vnet header decoded when `vnet_hdr`, goes to `sink`. Stops at EAGAIN (or
/// a read error, counted in `st`, logged once, naming `kind` and `dev`).
/// Returns the number of reads that returned a frame (including frames dropped as bad).
std::size_t read_batch(int fd, bool vnet_hdr, const char* kind, const std::string& dev,
                       core::BufferRef& buf,
                       std::size_t max, FrameSink& sink, DeviceReadStats& st);

/// Write every frame through `w` (created on first use with `defaults`); the sum of the
/// per-frame results (error: the last failure's errno).
WriteResult write_batch(std::unique_ptr<VnetWriter>& w, int fd, const VnetWriterOptions& defaults,
                        std::span<const offload::virtio::TapFrame> frames);

}  // namespace ofld::io::detail
