package fifoq_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Every exported field (and interface method) of every exported type, in this package and the packages
// under it, has a doc or line comment, so that go doc explains it. Commands and internal packages are
// left out.
func TestExportedFieldsDocumented(t *testing.T) {
	t.Parallel()
	var missing []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "internal", "examples", "testdata", "cmd", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !ts.Name.IsExported() {
				return true
			}
			var list *ast.FieldList
			switch typ := ts.Type.(type) {
			case *ast.StructType:
				list = typ.Fields
			case *ast.InterfaceType:
				list = typ.Methods
			default:
				return true
			}
			for _, fd := range list.List {
				if fd.Doc != nil || fd.Comment != nil {
					continue
				}
				name := ""
				for _, id := range fd.Names {
					if id.IsExported() {
						name = id.Name
					}
				}
				if len(fd.Names) == 0 {
					name = "(embedded)"
				}
				if name != "" {
					missing = append(missing, fset.Position(fd.Pos()).String()+": "+ts.Name.Name+"."+name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("exported fields without a comment:\n\t%s", strings.Join(missing, "\n\t"))
	}
}
