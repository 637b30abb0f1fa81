#include "measure/instance_cache.hpp"

namespace mpsb {

bool same_workload(const Config& a, const Config& b) {
  return !a.is_mix() && !b.is_mix() && a.kernel == b.kernel && a.precision == b.precision && a.size == b.size &&
         a.params == b.params;
}

void InstanceCache::prepare(const Config& own, int instances) {
  for (auto& s : slots_) {
    if (s.workload && !same_workload(s.config, own)) {
      s.workload.reset();  // before its stream
      s.timer.reset();
    }
  }
  if (slots_.size() < static_cast<std::size_t>(instances)) slots_.resize(static_cast<std::size_t>(instances));
}

}  // namespace mpsb
