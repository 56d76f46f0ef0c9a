# Local stub: pyarrow ships no types. Only what tunecore uses.
import enum
from typing import overload

from pyarrow.lib import NativeFile

class FileType(enum.IntEnum):
    NotFound = 0
    Unknown = 1
    File = 2
    Directory = 3

class FileInfo:
    @property
    def path(self) -> str: ...
    @property
    def base_name(self) -> str: ...
    @property
    def type(self) -> FileType: ...
    @property
    def size(self) -> int | None: ...

class FileSelector:
    def __init__(
        self, base_dir: str, allow_not_found: bool = False, recursive: bool = False
    ) -> None: ...

class FileSystem:
    @staticmethod
    def from_uri(uri: str) -> tuple[FileSystem, str]: ...
    @property
    def type_name(self) -> str: ...
    @overload
    def get_file_info(self, paths_or_selector: str) -> FileInfo: ...
    @overload
    def get_file_info(self, paths_or_selector: FileSelector | list[str]) -> list[FileInfo]: ...
    def create_dir(self, path: str, *, recursive: bool = True) -> None: ...
    def delete_dir(self, path: str) -> None: ...
    def delete_file(self, path: str) -> None: ...
    def move(self, src: str, dest: str) -> None: ...
    def copy_file(self, src: str, dest: str) -> None: ...
    def open_input_stream(
        self, path: str, compression: str | None = "detect", buffer_size: int | None = None
    ) -> NativeFile: ...
    def open_input_file(self, path: str) -> NativeFile: ...
    def open_output_stream(
        self,
        path: str,
        compression: str | None = "detect",
        buffer_size: int | None = None,
        metadata: dict[str, str] | None = None,
    ) -> NativeFile: ...

class LocalFileSystem(FileSystem):
    def __init__(self, *, use_mmap: bool = False) -> None: ...

class S3FileSystem(FileSystem):
    def __init__(
        self,
        *,
        access_key: str | None = None,
        secret_key: str | None = None,
        region: str | None = None,
        scheme: str | None = None,
        endpoint_override: str | None = None,
        allow_delayed_open: bool = False,
        allow_bucket_creation: bool = False,
        allow_bucket_deletion: bool = False,
    ) -> None: ...

def copy_files(
    source: str,
    destination: str,
    source_filesystem: FileSystem | None = None,
    destination_filesystem: FileSystem | None = None,
    *,
    chunk_size: int = 1048576,
    use_threads: bool = True,
) -> None: ...

class GcsFileSystem(FileSystem): ...
