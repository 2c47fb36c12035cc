#include "common/binary_io.h"

namespace tokenmill {

void BinaryWriter::Varint(uint64_t value) {
  char bytes[10];
  out_->append(bytes, static_cast<size_t>(EncodeVarint(value, bytes) - bytes));
}

void BinaryWriter::Bytes(std::string_view bytes) {
  Varint(bytes.size());
  out_->append(bytes);
}

void BinaryWriter::Fixed32(uint32_t value) {
  for (int i = 0; i < 4; ++i) out_->push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

void BinaryWriter::Fixed64(uint64_t value) {
  for (int i = 0; i < 8; ++i) out_->push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

bool BinaryReader::Varint(uint64_t* value) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (offset_ >= data_.size()) return false;
    uint8_t byte = static_cast<uint8_t>(data_[offset_++]);
    if (shift == 63 && byte > 1) return false;  // would overflow 64 bits
    result |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) {
      *value = result;
      return true;
    }
  }
  return false;
}

bool BinaryReader::Raw(size_t size, std::string_view* bytes) {
  if (size > remaining()) return false;
  *bytes = data_.substr(offset_, size);
  offset_ += size;
  return true;
}

bool BinaryReader::SkipPad(size_t alignment) {
  std::string_view count, zeros;
  return Raw(1, &count) && static_cast<unsigned char>(count[0]) < alignment &&
         Raw(static_cast<unsigned char>(count[0]), &zeros);
}

bool BinaryReader::Bytes(std::string_view* bytes) {
  uint64_t size;
  return Varint(&size) && size <= remaining() && Raw(static_cast<size_t>(size), bytes);
}

bool BinaryReader::Fixed32(uint32_t* value) {
  std::string_view raw;
  if (!Raw(4, &raw)) return false;
  *value = 0;
  for (int i = 0; i < 4; ++i) *value |= static_cast<uint32_t>(static_cast<uint8_t>(raw[i])) << (8 * i);
  return true;
}

bool BinaryReader::Fixed64(uint64_t* value) {
  std::string_view raw;
  if (!Raw(8, &raw)) return false;
  *value = 0;
  for (int i = 0; i < 8; ++i) *value |= static_cast<uint64_t>(static_cast<uint8_t>(raw[i])) << (8 * i);
  return true;
}

}  // namespace tokenmill
