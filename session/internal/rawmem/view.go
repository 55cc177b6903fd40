package rawmem

import (
	"fmt"
	"reflect"
	"unsafe"
)

// Bytes views the elements of s as their bytes, in the machine's byte
// order. T must be plain: numbers, and arrays and structs of them, so that
// every byte is data and any bytes are a valid T; Bytes panics otherwise.
func Bytes[T any](s []T) []byte {
	t := reflect.TypeFor[T]()
	if !plain(t) {
		panic(fmt.Sprintf("rawmem.Bytes: %v holds pointers or booleans", t))
	}
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(t.Size()))
}

// Size returns the size of a T in bytes, as Bytes lays it out.
func Size[T any]() int { return int(reflect.TypeFor[T]().Size()) }

// plain reports whether any bytes are a valid value of t.
func plain(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	case reflect.Array:
		return plain(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !plain(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

// StringBytes views a string's bytes. The caller must only read them: a
// string's bytes never change.
func StringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// String returns the bytes of b as a string that shares their memory. The
// caller guarantees that nothing writes those bytes again while the string
// may be used.
func String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// ArrayAt returns the n elements of the array that starts at first. The
// caller guarantees that first is the first element of a live array of at
// least n elements (holding first keeps it alive).
func ArrayAt[T any](first *T, n int) []T { return unsafe.Slice(first, n) }

// Inside reports whether p points into b's bytes: whether something shares
// b's memory (what tests of String's callers check).
func Inside(p *byte, b []byte) bool {
	if len(b) == 0 || p == nil {
		return false
	}
	a, start := uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&b[0]))
	return a >= start && a-start < uintptr(len(b))
}
