// RUN: not coop-opt %s -p 'legalize-coop-sizes{target=no-such-gpu}' 2>&1 | filecheck %s
// CHECK: error: legalize-coop-sizes: unknown target 'no-such-gpu': the shipped ones are arm-mali, h200-vulkan, sm90a-ptx
func.func @f() {
  func.return
}
